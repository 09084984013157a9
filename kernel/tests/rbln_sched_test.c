// SPDX-License-Identifier: GPL-2.0-only
/*
 * The scheduler glue (rbln_sched.c): jobs behind a busy engine wait their
 * turn instead of taking the direct path, their fences sit in the buffers'
 * reservation objects until they end, and a timeout resets only its engine.
 */
#include <kunit/test.h>
#include <linux/dma-resv.h>
#include <linux/math64.h>
#include <linux/sizes.h>
#include <linux/uaccess.h>
#include <drm/gpu_scheduler.h>

#include "../rbln_job.h"
#include "rbln_kunit_sim.h"

#define NEURAL	DRM_RBLN_ENGINE_NEURAL_DMA
#define TASK	DRM_RBLN_ENGINE_TASK_DMA

struct sched_fixture {
	struct rbln_device *rdev;
	struct file *file;
	u32 a, b, c;			/* device buffers on chiplet 0 */
};

static int rbln_sched_test_init(struct kunit *test)
{
	struct sched_fixture *f = kunit_kzalloc(test, sizeof(*f), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, f);
	f->rdev = rbln_test_device(test, "rebel100 64");
	f->file = rbln_test_open(test, f->rdev);
	f->a = rbln_test_bo(test, f->file, SZ_64K, 0, 0);
	f->b = rbln_test_bo(test, f->file, SZ_64K, 0, 0);
	f->c = rbln_test_bo(test, f->file, SZ_64K, 0, 0);
	test->priv = f;
	return 0;
}

/* Submits one 4 KiB copy @src -> @dst on @engine of chiplet 0; returns its seqno. */
static u64 submit_copy(struct kunit *test, u32 engine, u32 src, u32 dst)
{
	struct sched_fixture *f = test->priv;
	struct drm_rbln_copy c = { .src_handle = src, .dst_handle = dst, .size = SZ_4K };
	struct drm_rbln_submit s = {
		.engine = engine, .copy_count = 1, .copy_size = sizeof(c),
		.copies = (u64)(uintptr_t)rbln_test_user_copy(test, &c, sizeof(c)),
	};

	KUNIT_ASSERT_EQ(test, rbln_test_ioctl(test, f->file, DRM_IOCTL_RBLN_SUBMIT, &s), 0);
	return s.seqno;
}

static int wait_job(struct kunit *test, u64 seqno, s64 timeout_ns, int *status)
{
	struct sched_fixture *f = test->priv;
	struct drm_rbln_wait w = { .seqno = seqno, .timeout_ns = timeout_ns };
	int ret = rbln_test_ioctl(test, f->file, DRM_IOCTL_RBLN_WAIT, &w);

	*status = w.status;
	return ret;
}

/* A running job's fence is in its buffers' dma_resv: written as a write, read as a read. */
static void rbln_sched_job_fences_its_buffers(struct kunit *test)
{
	struct sched_fixture *f = test->priv;
	struct rbln_bo *a = rbln_test_lookup(test, f->file, f->a);
	struct rbln_bo *b = rbln_test_lookup(test, f->file, f->b);
	int status;
	u64 seqno;

	rbln_sim_set_hang(f->rdev, 0, NEURAL, true);
	seqno = submit_copy(test, NEURAL, f->a, f->b);
	KUNIT_EXPECT_EQ(test, wait_job(test, seqno, 0, &status), -ETIME);
	KUNIT_EXPECT_FALSE(test, dma_resv_test_signaled(b->base.resv, DMA_RESV_USAGE_WRITE));
	KUNIT_EXPECT_TRUE(test, dma_resv_test_signaled(a->base.resv, DMA_RESV_USAGE_WRITE));
	KUNIT_EXPECT_FALSE(test, dma_resv_test_signaled(a->base.resv, DMA_RESV_USAGE_READ));
	rbln_sim_set_hang(f->rdev, 0, NEURAL, false);
	KUNIT_ASSERT_EQ(test, wait_job(test, seqno, 10LL * NSEC_PER_SEC, &status), 0);
	KUNIT_EXPECT_EQ(test, status, 0);
	KUNIT_EXPECT_TRUE(test, dma_resv_test_signaled(b->base.resv, DMA_RESV_USAGE_READ));
}

/* A small job behind a queued one waits its turn: no direct path past the queue. */
static void rbln_sched_small_job_keeps_order(struct kunit *test)
{
	struct sched_fixture *f = test->priv;
	struct rbln_bo *a = rbln_test_lookup(test, f->file, f->a);
	struct rbln_bo *c = rbln_test_lookup(test, f->file, f->c);
	int status;
	u64 first, second;

	memset(a->vaddr, 0x5a, SZ_4K);
	rbln_sim_set_hang(f->rdev, 0, NEURAL, true);
	first = submit_copy(test, NEURAL, f->a, f->b);
	second = submit_copy(test, NEURAL, f->b, f->c);
	KUNIT_EXPECT_EQ(test, wait_job(test, second, 0, &status), -ETIME);
	rbln_sim_set_hang(f->rdev, 0, NEURAL, false);
	KUNIT_ASSERT_EQ(test, wait_job(test, second, 10LL * NSEC_PER_SEC, &status), 0);
	KUNIT_EXPECT_EQ(test, status, 0);
	KUNIT_ASSERT_EQ(test, wait_job(test, first, 0, &status), 0);
	KUNIT_EXPECT_EQ(test, status, 0);
	KUNIT_EXPECT_EQ(test, memcmp(c->vaddr, a->vaddr, SZ_4K), 0);
}

/* TDR: the hung engine's job fails with -ETIMEDOUT; another engine is not held up. */
static void rbln_sched_timeout_resets_one_engine(struct kunit *test)
{
	struct sched_fixture *f = test->priv;
	struct rbln_engine *engine = &f->rdev->chiplets[0].engines[NEURAL];
	int status;
	u64 hung, other;

	rbln_sim_set_hang(f->rdev, 0, NEURAL, true);
	hung = submit_copy(test, NEURAL, f->a, f->b);
	other = submit_copy(test, TASK, f->a, f->c);
	KUNIT_ASSERT_EQ(test, wait_job(test, other, 0, &status), 0);
	KUNIT_EXPECT_EQ(test, status, 0);
	KUNIT_EXPECT_EQ(test, wait_job(test, hung, 0, &status), -ETIME);
	KUNIT_ASSERT_EQ(test, wait_job(test, hung, 10LL * NSEC_PER_SEC, &status), 0);
	KUNIT_EXPECT_EQ(test, status, -ETIMEDOUT);
	KUNIT_EXPECT_EQ(test, atomic_read(&engine->resets), 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&engine->queued), 0);
	hung = submit_copy(test, NEURAL, f->a, f->b);
	KUNIT_ASSERT_EQ(test, wait_job(test, hung, 10LL * NSEC_PER_SEC, &status), 0);
	KUNIT_EXPECT_EQ(test, status, 0);
}

/*
 * What a loaded TCG guest running the sanitizer kernel may add to a bound:
 * the timeout's work item and the waiter starting late (the VM suite's
 * kScheduling, tests/integration/test_dma.cpp).
 */
#define RBLN_TEST_SCHEDULING_MS	450

/*
 * The biggest job the limit allows, on an engine slowed to take 3.2 s over
 * it (200 ms a chunk), ends with -ETIMEDOUT at its timeout: within
 * job_timeout_ms plus RBLN_HW_RESET_MAX_MS of its start, as the reset stops
 * it between chunks; then the engine runs a small job.
 */
static void rbln_sched_timeout_stops_the_biggest_job(struct kunit *test)
{
	struct sched_fixture *f = test->priv;
	struct rbln_sim_device *sdev = rbln_test_sim(f->rdev);
	struct rbln_engine *engine = &f->rdev->chiplets[0].engines[NEURAL];
	u64 limit = f->rdev->info.job_max_bytes, timeout_ms, seqno, start, took_ms;
	u32 a = rbln_test_bo(test, f->file, SZ_4M, 0, 0), b = rbln_test_bo(test, f->file, SZ_4M, 0, 0);
	struct drm_rbln_copy *copies;
	struct drm_rbln_submit s = { .engine = NEURAL, .copy_size = sizeof(*copies) };
	u32 i, n;
	int status;

	KUNIT_ASSERT_EQ(test, limit % SZ_4M, 0);
	n = limit / SZ_4M;
	copies = kunit_kcalloc(test, n, sizeof(*copies), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, copies);
	for (i = 0; i < n; i++)
		copies[i] = (struct drm_rbln_copy){ .src_handle = a, .dst_handle = b, .size = SZ_4M };
	s.copy_count = n;
	s.copies = (u64)(uintptr_t)rbln_test_user_copy(test, copies, n * sizeof(*copies));
	timeout_ms = jiffies_to_msecs(READ_ONCE(engine->sched.timeout));

	WRITE_ONCE(sdev->slow_us, 200000);
	start = ktime_get_ns();
	KUNIT_ASSERT_EQ(test, rbln_test_ioctl(test, f->file, DRM_IOCTL_RBLN_SUBMIT, &s), 0);
	seqno = s.seqno;
	KUNIT_ASSERT_EQ(test, wait_job(test, seqno, 10LL * NSEC_PER_SEC, &status), 0);
	took_ms = div_u64(ktime_get_ns() - start, NSEC_PER_MSEC);
	WRITE_ONCE(sdev->slow_us, 0);
	kunit_info(test, "biggest job (%llu bytes), timeout %llu ms: %d after %llu ms\n", limit,
		   timeout_ms, status, took_ms);
	KUNIT_EXPECT_EQ(test, status, -ETIMEDOUT);
	KUNIT_EXPECT_GE(test, took_ms, timeout_ms);
	KUNIT_EXPECT_LE(test, took_ms, timeout_ms + RBLN_HW_RESET_MAX_MS + RBLN_TEST_SCHEDULING_MS);
	KUNIT_EXPECT_EQ(test, atomic_read(&engine->resets), 1);
	seqno = submit_copy(test, NEURAL, f->a, f->b);
	KUNIT_ASSERT_EQ(test, wait_job(test, seqno, 10LL * NSEC_PER_SEC, &status), 0);
	KUNIT_EXPECT_EQ(test, status, 0);
}

/*
 * Removing the device with a job held by a hung engine ends it, and the one
 * queued behind it, at once.  Both scheduler fences end up with a parent of
 * ours, whose pins keep the device (which the scheduler fence names its
 * timeline from) and the module while anyone holds them.
 */
static void rbln_sched_removal_ends_held_jobs(struct kunit *test)
{
	struct sched_fixture *f = test->priv;
	struct rbln_client *client = rbln_test_client(f->file);
	struct dma_fence *held, *queued;
	u64 start;

	rbln_sim_set_hang(f->rdev, 0, NEURAL, true);
	held = rbln_test_job_fence(test, f->file, submit_copy(test, NEURAL, f->a, f->b));
	queued = rbln_test_job_fence(test, f->file, submit_copy(test, NEURAL, f->b, f->c));
	start = ktime_get_ns();
	rbln_test_remove_device(test, f->rdev);
	KUNIT_EXPECT_EQ(test, atomic_read(&client->inflight), 0);
	KUNIT_EXPECT_LT(test, ktime_get_ns() - start, (u64)NSEC_PER_SEC / 2);
	KUNIT_EXPECT_TRUE(test, dma_fence_is_signaled(held));
	KUNIT_EXPECT_TRUE(test, dma_fence_is_signaled(queued));
	KUNIT_EXPECT_NOT_NULL(test, to_drm_sched_fence(held)->parent);
	KUNIT_EXPECT_NOT_NULL(test, to_drm_sched_fence(queued)->parent);
}

static struct kunit_case rbln_sched_cases[] = {
	KUNIT_CASE(rbln_sched_job_fences_its_buffers),
	KUNIT_CASE(rbln_sched_small_job_keeps_order),
	KUNIT_CASE(rbln_sched_timeout_resets_one_engine),
	KUNIT_CASE(rbln_sched_timeout_stops_the_biggest_job),
	KUNIT_CASE(rbln_sched_removal_ends_held_jobs),
	{}
};

static struct kunit_suite rbln_sched_suite = {
	.name = "rbln_sched",
	.init = rbln_sched_test_init,
	.test_cases = rbln_sched_cases,
};
kunit_test_suite(rbln_sched_suite);
