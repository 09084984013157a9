// SPDX-License-Identifier: GPL-2.0-only
/*
 * Jobs of a backend that moves bytes by DMA (the simulator's sim_dma mode):
 * a scheduled job's buffers are unmapped by the time its fence signals.
 * Unmapping is what hands the device's writes to the CPU (a bounce buffer
 * copied back, caches invalidated), so a dependant or a syncobj waiter that
 * ran before it would read the old bytes, and the late copy back would
 * overwrite what they wrote meanwhile.
 */
#include <kunit/test.h>
#include <linux/completion.h>
#include <linux/dma-fence.h>
#include <linux/sizes.h>
#include <linux/string.h>

#include "../rbln_job.h"
#include "rbln_kunit_sim.h"

#define NEURAL	DRM_RBLN_ENGINE_NEURAL_DMA

/* What the job's fence saw when it signalled. */
struct signal_probe {
	struct dma_fence_cb cb;
	struct rbln_job *job;
	u32 mapped_at_signal;
	struct completion signalled;
};

static void rbln_dma_probe_signal(struct dma_fence *fence, struct dma_fence_cb *cb)
{
	struct signal_probe *p = container_of(cb, struct signal_probe, cb);

	p->mapped_at_signal = READ_ONCE(p->job->dma_mapped);
	complete(&p->signalled);
}

/* The job's end work waits here until the test has looked. */
static struct completion *rbln_dma_end_gate;

static int rbln_dma_hold_end_work(enum rbln_test_point_id point)
{
	/* A bound for a broken test, not a figure: the test opens the gate itself. */
	if (point == RBLN_TP_JOB_END_WORK)
		wait_for_completion_timeout(rbln_dma_end_gate, 30 * HZ);
	return 0;
}

static void rbln_dma_open_gate(void *gate)
{
	complete_all(gate);
}

/* A simulated ATOM whose jobs get their buffers as DMA addresses. */
static struct rbln_device *rbln_dma_device(struct kunit *test)
{
	struct rbln_device *rdev;

	WRITE_ONCE(rbln_sim_dma, true);
	rdev = rbln_test_device(test, "atom 16");
	WRITE_ONCE(rbln_sim_dma, false);
	KUNIT_ASSERT_NOT_NULL(test, rdev->info.dma_dev);
	return rdev;
}

static void rbln_dma_unmapped_before_the_fence_signals(struct kunit *test)
{
	struct rbln_device *rdev = rbln_dma_device(test);
	struct file *file = rbln_test_open(test, rdev);
	u32 src = rbln_test_bo(test, file, SZ_16K, 0, 0), dst = rbln_test_bo(test, file, SZ_16K, 0, 0);
	struct rbln_bo *s = rbln_test_lookup(test, file, src), *d = rbln_test_lookup(test, file, dst);
	struct drm_rbln_copy c = { .src_handle = src, .dst_handle = dst, .size = SZ_16K };
	struct drm_rbln_submit a = {
		.engine = NEURAL, .copy_count = 1, .copy_size = sizeof(c),
		.copies = (u64)(uintptr_t)rbln_test_user_copy(test, &c, sizeof(c)),
	};
	struct drm_rbln_wait w = { .timeout_ns = 30LL * NSEC_PER_SEC };
	struct rbln_client *client = rbln_test_client(file);
	struct completion *gate = kunit_kzalloc(test, sizeof(*gate), GFP_KERNEL);
	struct signal_probe *p = kunit_kzalloc(test, sizeof(*p), GFP_KERNEL);
	struct dma_fence *done;

	KUNIT_ASSERT_NOT_NULL(test, gate);
	KUNIT_ASSERT_NOT_NULL(test, p);
	init_completion(gate);
	init_completion(&p->signalled);
	rbln_dma_end_gate = gate;
	rbln_test_set_point_hook(test, rbln_dma_hold_end_work);
	/* Runs before the hook is cleared: nothing stays held if an assertion fails. */
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, rbln_dma_open_gate, gate), 0);
	memset(s->vaddr, 0x5a, SZ_16K);

	/* A hung engine: the job is scheduled and held until the callback is in place. */
	rbln_sim_set_hang(rdev, 0, NEURAL, true);
	KUNIT_ASSERT_EQ(test, rbln_test_ioctl(test, file, DRM_IOCTL_RBLN_SUBMIT, &a), 0);
	done = rbln_test_job_fence(test, file, a.seqno);
	mutex_lock(&client->lock);
	p->job = xa_load(&client->jobs, a.seqno);
	mutex_unlock(&client->lock);
	KUNIT_ASSERT_NOT_NULL(test, p->job);
	KUNIT_ASSERT_EQ(test, dma_fence_add_callback(done, &p->cb, rbln_dma_probe_signal), 0);
	rbln_sim_set_hang(rdev, 0, NEURAL, false);

	KUNIT_ASSERT_GT(test, wait_for_completion_timeout(&p->signalled, 30 * HZ), 0UL);
	KUNIT_EXPECT_EQ_MSG(test, p->mapped_at_signal, 0U,
			    "sides still mapped for the device when the job's fence signalled");
	complete_all(gate);

	w.seqno = a.seqno;
	KUNIT_ASSERT_EQ(test, rbln_test_ioctl(test, file, DRM_IOCTL_RBLN_WAIT, &w), 0);
	KUNIT_EXPECT_EQ(test, w.status, 0);
	KUNIT_EXPECT_NULL(test, memchr_inv(d->vaddr, 0x5a, SZ_16K));
}

static struct kunit_case rbln_dma_cases[] = {
	KUNIT_CASE(rbln_dma_unmapped_before_the_fence_signals),
	{}
};

static struct kunit_suite rbln_dma_suite = {
	.name = "rbln_dma",
	.test_cases = rbln_dma_cases,
};
kunit_test_suite(rbln_dma_suite);
