// SPDX-License-Identifier: GPL-2.0-only
/*
 * A round trip through an NPU of the PCI backend (QEMU's edu), by raw ioctls:
 * host A -> device D (External HDMA), D -> device E (Neural DMA), E -> host B
 * (External HDMA), random sizes and offsets, then B must equal A byte for byte.
 *   edu_smoke /dev/rblnN [ROUNDS]
 * Exit 0 iff every round was byte-exact.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>
#include <drm.h>
#include <drm/rbln_drm.h>

#define BUF (64 * 1024)

static int fd;

static uint32_t bo(uint32_t flags, void **map)
{
	struct drm_rbln_bo_create c = { .size = BUF, .flags = flags | DRM_RBLN_BO_EAGER };
	struct drm_rbln_bo_info i = { 0 };

	if (ioctl(fd, DRM_IOCTL_RBLN_BO_CREATE, &c)) {
		perror("BO_CREATE");
		exit(1);
	}
	i.handle = c.handle;
	if (ioctl(fd, DRM_IOCTL_RBLN_BO_INFO, &i)) {
		perror("BO_INFO");
		exit(1);
	}
	*map = mmap(NULL, BUF, PROT_READ | PROT_WRITE, MAP_SHARED, fd, i.mmap_offset);
	if (*map == MAP_FAILED) {
		perror("mmap");
		exit(1);
	}
	return c.handle;
}

static int copy(uint32_t engine, uint32_t src, uint64_t so, uint32_t dst, uint64_t dof, uint64_t n)
{
	struct drm_rbln_copy c = { .src_handle = src, .dst_handle = dst, .src_offset = so,
				   .dst_offset = dof, .size = n };
	struct drm_rbln_submit s = { .engine = engine, .copies = (uintptr_t)&c, .copy_count = 1,
				     .copy_size = sizeof(c) };
	struct drm_rbln_wait w = { 0 };

	if (ioctl(fd, DRM_IOCTL_RBLN_SUBMIT, &s)) {
		fprintf(stderr, "SUBMIT engine %u %llu bytes: %s\n", engine, (unsigned long long)n,
			strerror(errno));
		return -1;
	}
	w.seqno = s.seqno;
	w.timeout_ns = 30LL * 1000000000;
	if (ioctl(fd, DRM_IOCTL_RBLN_WAIT, &w)) {
		perror("WAIT");
		return -1;
	}
	if (w.status)
		fprintf(stderr, "job on engine %u ended with %d (%s)\n", engine, w.status,
			strerror(-w.status));
	return w.status;
}

int main(int argc, char **argv)
{
	int rounds = argc > 2 ? atoi(argv[2]) : 3, r, bad = 0;
	unsigned char *a, *b, *d, *e;
	uint32_t ha, hb, hd, he;

	if (argc < 2) {
		fprintf(stderr, "usage: edu_smoke /dev/rblnN [ROUNDS]\n");
		return 2;
	}
	fd = open(argv[1], O_RDWR);
	if (fd < 0) {
		perror(argv[1]);
		return 1;
	}
	srand(getpid());
	ha = bo(DRM_RBLN_BO_HOST, (void **)&a);
	hb = bo(DRM_RBLN_BO_HOST, (void **)&b);
	hd = bo(0, (void **)&d);
	he = bo(0, (void **)&e);
	for (r = 0; r < rounds; r++) {
		uint64_t n = 1 + rand() % (16 * 1024);
		uint64_t oa = rand() % (BUF - n), od = rand() % (BUF - n);
		uint64_t oe = rand() % (BUF - n), ob = rand() % (BUF - n);
		uint64_t i;

		for (i = 0; i < BUF; i++)
			a[i] = rand();
		memset(b, 0, BUF);
		if (copy(DRM_RBLN_ENGINE_EXTERNAL_HDMA, ha, oa, hd, od, n) ||
		    copy(DRM_RBLN_ENGINE_NEURAL_DMA, hd, od, he, oe, n) ||
		    copy(DRM_RBLN_ENGINE_EXTERNAL_HDMA, he, oe, hb, ob, n))
			return 1;
		if (memcmp(a + oa, b + ob, n)) {
			for (i = 0; i < n && a[oa + i] == b[ob + i]; i++)
				;
			printf("round %d: %llu bytes: MISMATCH at byte %llu\n", r,
			       (unsigned long long)n, (unsigned long long)i);
			bad++;
		} else {
			printf("round %d: %llu bytes (host+%llu -> dev+%llu -> dev+%llu -> host+%llu): byte-exact\n",
			       r, (unsigned long long)n, (unsigned long long)oa, (unsigned long long)od,
			       (unsigned long long)oe, (unsigned long long)ob);
		}
	}
	return bad ? 1 : 0;
}
