/*
 * A multi-threaded C client of libdevmgr, run under ThreadSanitizer with the
 * library built the same way: each use the "Threads" section of
 * docs/libdevmgr-c.md allows, from several threads at once.  Exit 0 when every
 * check held; ThreadSanitizer makes it exit 66 on any race it saw.
 *   rbln_c_threads NPU     (an NPU with chiplet 0 and External HDMA)
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rbln/devmgr.h"

#define THREADS 6
#define ROUNDS 8
#define SIZE 16384

static rbln_device *dev;
static rbln_buffer *shared_buffer;
static rbln_job *shared_job;
static rbln_npu_list *npus;
static pthread_barrier_t start;
static int failures;
static pthread_mutex_t failures_lock = PTHREAD_MUTEX_INITIALIZER;

static void fail(int thread, const char *what, rbln_status s)
{
	pthread_mutex_lock(&failures_lock);
	failures++;
	fprintf(stderr, "thread %d: %s: %s (%s)\n", thread, what, rbln_status_string(s), rbln_last_error());
	pthread_mutex_unlock(&failures_lock);
}

#define CHECK(thread, call)                                                   \
	do {                                                                  \
		rbln_status s_ = (call);                                      \
		if (s_ != RBLN_OK) {                                          \
			fail(thread, #call, s_);                              \
			goto out;                                             \
		}                                                             \
	} while (0)

/* Host -> device -> host through its own buffers, byte for byte. */
static void round_trip(int t, unsigned round)
{
	rbln_buffer *in = NULL, *vram = NULL, *out_buf = NULL;
	rbln_job *up = NULL, *down = NULL;
	unsigned char *src, *dst;

	CHECK(t, rbln_buffer_alloc(dev, SIZE, 0, RBLN_ALLOC_HOST, &in));
	CHECK(t, rbln_buffer_alloc(dev, SIZE, 0, 0, &vram));
	CHECK(t, rbln_buffer_alloc(dev, SIZE, 0, RBLN_ALLOC_HOST, &out_buf));
	CHECK(t, rbln_buffer_map(in, (void **)&src));
	CHECK(t, rbln_buffer_map(out_buf, (void **)&dst));
	for (unsigned i = 0; i < SIZE; i++)
		src[i] = (unsigned char)(i * 31 + t * 7 + round);
	memset(dst, 0, SIZE);
	rbln_copy c1 = {sizeof(rbln_copy), in, vram, 0, 0, SIZE};
	CHECK(t, rbln_submit(dev, RBLN_ENGINE_EXTERNAL_HDMA, 0, &c1, 1, "tsan-up", &up));
	const rbln_job *after[1] = {up};
	rbln_copy c2 = {sizeof(rbln_copy), vram, out_buf, 0, 0, SIZE};
	CHECK(t, rbln_submit_after(dev, RBLN_ENGINE_EXTERNAL_HDMA, 0, &c2, 1, "tsan-down", after, 1, &down));
	CHECK(t, rbln_job_wait(down, 10000000000ll));
	if (memcmp(src, dst, SIZE))
		fail(t, "the round trip changed the bytes", RBLN_OK);
out:
	if (up)
		rbln_job_free(up);
	if (down)
		rbln_job_free(down);
	if (in)
		rbln_buffer_free(in);
	if (vram)
		rbln_buffer_free(vram);
	if (out_buf)
		rbln_buffer_free(out_buf);
}

static void *worker(void *arg)
{
	int t = (int)(intptr_t)arg;
	void *p = NULL;
	char want[64];

	pthread_barrier_wait(&start);
	/* One mapping for all: every thread's first call gives the same pointer. */
	CHECK(t, rbln_buffer_map(shared_buffer, &p));
	/* One job waited for by every thread; then the buffer it filled is the CPU's. */
	CHECK(t, rbln_job_wait(shared_job, 10000000000ll));
	((volatile unsigned char *)p)[t] = (unsigned char)t;	/* its own byte */
	for (unsigned r = 0; r < ROUNDS; r++) {
		round_trip(t, r);
		rbln_device_status st = {.struct_size = sizeof(st)};
		CHECK(t, rbln_device_get_status(dev, &st));
		size_t count = 0;
		CHECK(t, rbln_npu_count(&count));
		rbln_npu_info info = {.struct_size = sizeof(info)};
		CHECK(t, rbln_npu_list_get(npus, 0, &info));
		/* Each thread's last error is its own. */
		if (rbln_npu_list_get(npus, 1000 + t, &info) != RBLN_ERR_NO_DEVICE)
			fail(t, "entry past the end", RBLN_OK);
		snprintf(want, sizeof(want), "rbln_npu_list_get: entry %d does not exist", 1000 + t);
		if (strncmp(rbln_last_error(), want, strlen(want)))
			fail(t, "another thread's message", RBLN_OK);
	}
out:
	return p;
}

int main(int argc, char **argv)
{
	pthread_t threads[THREADS];
	void *mapped[THREADS];
	rbln_buffer *src = NULL;

	if (argc != 2) {
		fprintf(stderr, "usage: rbln_c_threads NPU\n");
		return 2;
	}
	if (rbln_device_open((unsigned)atoi(argv[1]), &dev) != RBLN_OK ||
	    rbln_buffer_alloc(dev, SIZE, 0, RBLN_ALLOC_HOST, &shared_buffer) != RBLN_OK ||
	    rbln_buffer_alloc(dev, SIZE, 0, 0, &src) != RBLN_OK || rbln_npu_list_take(&npus) != RBLN_OK) {
		fprintf(stderr, "setup: %s\n", rbln_last_error());
		return 1;
	}
	rbln_copy c = {sizeof(rbln_copy), src, shared_buffer, 0, 0, SIZE};
	if (rbln_submit(dev, RBLN_ENGINE_EXTERNAL_HDMA, 0, &c, 1, "tsan-shared", &shared_job) != RBLN_OK) {
		fprintf(stderr, "setup: %s\n", rbln_last_error());
		return 1;
	}
	pthread_barrier_init(&start, NULL, THREADS);
	for (int t = 0; t < THREADS; t++)
		pthread_create(&threads[t], NULL, worker, (void *)(intptr_t)t);
	for (int t = 0; t < THREADS; t++)
		pthread_join(threads[t], &mapped[t]);
	for (int t = 1; t < THREADS; t++)
		if (mapped[t] != mapped[0]) {
			fprintf(stderr, "threads %d and 0 got different mappings\n", t);
			failures++;
		}
	rbln_job_free(shared_job);
	rbln_buffer_free(src);
	rbln_buffer_free(shared_buffer);
	rbln_npu_list_free(npus);
	rbln_device_close(dev);
	printf("rbln_c_threads: %d threads x %d rounds, %d failures\n", THREADS, ROUNDS, failures);
	return failures ? 1 : 0;
}
