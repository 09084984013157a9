// SPDX-License-Identifier: GPL-2.0-only
/*
 * The core against the fake backend (rbln_fake_hw.h), with no simulator
 * linked: a device made from what the backend declares and taken down with
 * no op called after, buffers backed where the core's allocator put them,
 * a job pushed and completed through the upcall, a push the engine refuses,
 * a failed engine reset that wedges the device, and removal with a job on
 * the engine and one queued behind it.
 */
#include <kunit/test.h>
#include <linux/dma-fence.h>
#include <linux/sizes.h>
#include <linux/string.h>
#include <linux/workqueue.h>

#include "../rbln_device.h"
#include "rbln_fake_hw.h"
#include "rbln_kunit.h"

#define NEURAL	DRM_RBLN_ENGINE_NEURAL_DMA
#define TASK	DRM_RBLN_ENGINE_TASK_DMA
#define DHDMA	DRM_RBLN_ENGINE_DEVICE_HDMA
#define EHDMA	DRM_RBLN_ENGINE_EXTERNAL_HDMA

/* Not what the simulator has: each chiplet its own set, one without Task DMA. */
static const u32 fake_engines[RBLN_MAX_CHIPLETS] = {
	BIT(NEURAL) | BIT(TASK) | BIT(EHDMA),
	BIT(NEURAL),
	BIT(TASK) | BIT(DHDMA),
	BIT(DHDMA),
};

struct fixture {
	struct rbln_fake_hw *fake;
	struct rbln_device *rdev;
	struct file *file;
	u32 a, b;			/* 64 KiB device buffers on chiplet 0 */
};

static int rbln_fake_hw_test_init(struct kunit *test)
{
	struct fixture *f = kunit_kzalloc(test, sizeof(*f), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, f);
	f->fake = rbln_fake_hw_create(test, 4, fake_engines);
	f->rdev = f->fake->rdev;
	f->file = rbln_test_open(test, f->rdev);
	f->a = rbln_test_bo(test, f->file, SZ_64K, 0, 0);
	f->b = rbln_test_bo(test, f->file, SZ_64K, 0, 0);
	test->priv = f;
	return 0;
}

/* Submits @size bytes @src+@src_off -> @dst+@dst_off on @engine of @chiplet; SUBMIT's result. */
static int submit(struct kunit *test, u32 engine, u32 chiplet, u32 src, u64 src_off, u32 dst,
		  u64 dst_off, u64 size, u64 *seqno)
{
	struct fixture *f = test->priv;
	struct drm_rbln_copy c = { .src_handle = src, .dst_handle = dst, .src_offset = src_off,
				   .dst_offset = dst_off, .size = size };
	struct drm_rbln_submit s = {
		.engine = engine, .chiplet = chiplet, .copy_count = 1, .copy_size = sizeof(c),
		.copies = (u64)(uintptr_t)rbln_test_user_copy(test, &c, sizeof(c)),
	};
	int ret = rbln_test_ioctl(test, f->file, DRM_IOCTL_RBLN_SUBMIT, &s);

	*seqno = s.seqno;
	return ret;
}

/* A 4 KiB copy a -> b on @engine of chiplet 0, which SUBMIT takes. */
static u64 submit_ab(struct kunit *test, u32 engine)
{
	struct fixture *f = test->priv;
	u64 seqno;

	KUNIT_ASSERT_EQ(test, submit(test, engine, 0, f->a, 0, f->b, 0, SZ_4K, &seqno), 0);
	return seqno;
}

/* WAIT for @seqno (@timeout_ns, 0 polls); its status in @status. */
static int wait_job(struct kunit *test, u64 seqno, s64 timeout_ns, int *status)
{
	struct fixture *f = test->priv;
	struct drm_rbln_wait w = { .seqno = seqno, .timeout_ns = timeout_ns };
	int ret = rbln_test_ioctl(test, f->file, DRM_IOCTL_RBLN_WAIT, &w);

	*status = w.status;
	return ret;
}

/* The job's status, waited for (the job must end on its own). */
static int job_status(struct kunit *test, u64 seqno)
{
	int status;

	KUNIT_ASSERT_EQ(test, wait_job(test, seqno, 30LL * NSEC_PER_SEC, &status), 0);
	return status;
}

/* A job a -> b on @engine of chiplet 0, ended by the engine with @status; the job's status. */
static int run_ab(struct kunit *test, u32 engine, int status)
{
	struct fixture *f = test->priv;
	u64 seqno = submit_ab(test, engine);

	rbln_fake_hw_wait_pushed(f->fake, 0, engine);
	rbln_fake_hw_complete(f->fake, 0, engine, status);
	return job_status(test, seqno);
}

/* The device has what the backend declared, chiplet by chiplet; removal syncs its interrupts. */
static void rbln_fake_hw_engines_as_declared(struct kunit *test)
{
	struct fixture *f = test->priv;
	struct drm_rbln_bo_create bo = { .size = SZ_4K };
	unsigned int i, kind;

	KUNIT_ASSERT_EQ(test, rbln_device_chiplets(f->rdev), 4);
	for (i = 0; i < 4; i++)
		for (kind = 0; kind < DRM_RBLN_ENGINE_COUNT; kind++)
			KUNIT_EXPECT_EQ_MSG(test, rbln_device_has_engine(f->rdev, i, kind),
					    !!(fake_engines[i] & BIT(kind)), "chiplet %u %s", i,
					    rbln_engine_name(kind));
	KUNIT_EXPECT_EQ(test, rbln_device_status(f->rdev), DRM_RBLN_STATUS_READY);

	rbln_fake_hw_remove(f->fake);
	KUNIT_EXPECT_EQ(test, atomic_read(&f->fake->sync_irqs), 1);
	KUNIT_EXPECT_EQ(test, rbln_device_status(f->rdev), DRM_RBLN_STATUS_FINISH);
	KUNIT_EXPECT_EQ(test, rbln_test_ioctl(test, f->file, DRM_IOCTL_RBLN_BO_CREATE, &bo), -ENODEV);
	KUNIT_EXPECT_EQ(test, atomic_read(&f->fake->bad_calls), 0);
}

/* SUBMIT to an engine the backend did not declare is refused; nothing reaches the backend. */
static void rbln_fake_hw_undeclared_engine_refused(struct kunit *test)
{
	struct fixture *f = test->priv;
	u32 c1 = rbln_test_bo(test, f->file, SZ_64K, 1, 0);
	u64 seqno;

	KUNIT_EXPECT_EQ(test, submit(test, TASK, 1, c1, 0, c1, SZ_4K, SZ_4K, &seqno), -EINVAL);
	KUNIT_EXPECT_EQ(test, submit(test, DHDMA, 0, f->a, 0, f->b, 0, SZ_4K, &seqno), -EINVAL);
	KUNIT_EXPECT_EQ(test, atomic_read(&f->fake->pushes), 0);
}

/*
 * Buffers get their backing from the backend at the device address the
 * core's allocator chose (the fake checks each is inside its chiplet's
 * window, or 0 for host memory); the test's end checks each is freed.
 */
static void rbln_fake_hw_buffers_backed_by_the_backend(struct kunit *test)
{
	struct fixture *f = test->priv;
	u32 c2 = rbln_test_bo(test, f->file, SZ_64K, 2, 0);
	u32 host = rbln_test_bo(test, f->file, SZ_64K, 0, DRM_RBLN_BO_HOST);
	u32 il = rbln_test_bo(test, f->file, SZ_64K, DRM_RBLN_CHIPLET_INTERLEAVED, 0);
	struct drm_rbln_bo_info info = { .handle = c2 };
	const u32 handles[] = { f->a, f->b, c2, host, il };
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(handles); i++) {
		struct rbln_bo *bo = rbln_test_lookup(test, f->file, handles[i]);

		KUNIT_ASSERT_NOT_NULL(test, bo->vaddr);
		KUNIT_EXPECT_NULL(test, memchr_inv(bo->vaddr, 0, SZ_64K));
	}
	KUNIT_EXPECT_EQ(test, atomic_read(&f->fake->allocs), ARRAY_SIZE(handles));
	KUNIT_EXPECT_EQ(test, rbln_test_ioctl(test, f->file, DRM_IOCTL_RBLN_BO_INFO, &info), 0);
	KUNIT_EXPECT_EQ(test, info.chiplet, 2);
	KUNIT_EXPECT_EQ(test, atomic_read(&f->fake->bad_calls), 0);
}

/* The job the backend is pushed is the one submitted; its upcall ends it. */
static void rbln_fake_hw_job_ends_by_upcall(struct kunit *test)
{
	struct fixture *f = test->priv;
	struct rbln_bo *a = rbln_test_lookup(test, f->file, f->a);
	struct rbln_bo *b = rbln_test_lookup(test, f->file, f->b);
	struct rbln_hw_job *hw;
	int status;
	u64 seqno;

	memset(a->vaddr, 0xa5, SZ_64K);
	KUNIT_ASSERT_EQ(test, submit(test, NEURAL, 0, f->a, SZ_4K, f->b, SZ_8K, SZ_4K, &seqno), 0);
	hw = rbln_fake_hw_wait_pushed(f->fake, 0, NEURAL);
	KUNIT_EXPECT_EQ(test, hw->chiplet, 0);
	KUNIT_EXPECT_EQ(test, hw->engine, NEURAL);
	KUNIT_EXPECT_EQ(test, hw->count, 1);
	KUNIT_EXPECT_EQ(test, hw->bytes, SZ_4K);
	KUNIT_EXPECT_EQ(test, hw->copies[0].src_offset, SZ_4K);
	KUNIT_EXPECT_EQ(test, hw->copies[0].dst_offset, SZ_8K);
	KUNIT_EXPECT_PTR_EQ(test, hw->bufs[0].cpu, a->vaddr);
	KUNIT_EXPECT_PTR_EQ(test, hw->bufs[1].cpu, b->vaddr);
	KUNIT_EXPECT_NULL(test, hw->bufs[0].sgt);	/* no dma_dev: CPU addresses only */

	/* On the engine until the backend says otherwise. */
	KUNIT_EXPECT_EQ(test, wait_job(test, seqno, 0, &status), -ETIME);
	rbln_fake_hw_complete(f->fake, 0, NEURAL, 0);
	KUNIT_EXPECT_EQ(test, job_status(test, seqno), 0);
	KUNIT_EXPECT_NULL(test, memchr_inv(b->vaddr + SZ_8K, 0xa5, SZ_4K));
	KUNIT_EXPECT_NULL(test, memchr_inv(b->vaddr, 0, SZ_8K));

	/* An error the engine reports is the job's. */
	KUNIT_EXPECT_EQ(test, run_ab(test, TASK, -EIO), -EIO);
	KUNIT_EXPECT_EQ(test, atomic_read(&f->fake->pushes), 2);
}

/* A push the engine refuses ends the job with its error; the backend never reports it. */
static void rbln_fake_hw_push_fails(struct kunit *test)
{
	struct fixture *f = test->priv;
	u64 seqno;

	WRITE_ONCE(f->fake->push_error, -EBUSY);
	seqno = submit_ab(test, NEURAL);
	KUNIT_EXPECT_EQ(test, job_status(test, seqno), -EBUSY);
	KUNIT_EXPECT_EQ(test, atomic_read(&f->fake->pushes), 1);
	KUNIT_EXPECT_FALSE(test, rbln_fake_hw_busy(f->fake, 0, NEURAL));

	/* The engine is not left thinking it has a job: the next one runs. */
	WRITE_ONCE(f->fake->push_error, 0);
	KUNIT_EXPECT_EQ(test, run_ab(test, NEURAL, 0), 0);
}

/*
 * A job past its timeout is reset; a reset that fails wedges the device:
 * status FAULT, jobs fail with -EIO without reaching the backend, until a
 * RESET whose device reset works (one that fails leaves it wedged).
 */
static void rbln_fake_hw_failed_reset_wedges(struct kunit *test)
{
	struct fixture *f = test->priv;
	struct drm_rbln_reset reset = {};
	u64 hung, refused;

	WRITE_ONCE(f->fake->engine_reset_error, -EIO);
	hung = submit_ab(test, NEURAL);
	rbln_fake_hw_wait_pushed(f->fake, 0, NEURAL);
	/* Never completed: the scheduler's timeout ends it. */
	KUNIT_EXPECT_EQ(test, job_status(test, hung), -ETIMEDOUT);
	KUNIT_EXPECT_EQ(test, atomic_read(&f->fake->engine_resets), 1);
	KUNIT_EXPECT_FALSE(test, rbln_fake_hw_busy(f->fake, 0, NEURAL));
	flush_work(&f->rdev->wedge_work);
	KUNIT_EXPECT_TRUE(test, READ_ONCE(f->rdev->wedged));
	KUNIT_EXPECT_EQ(test, rbln_device_status(f->rdev), DRM_RBLN_STATUS_FAULT);

	refused = submit_ab(test, TASK);
	KUNIT_EXPECT_EQ(test, job_status(test, refused), -EIO);
	KUNIT_EXPECT_EQ(test, atomic_read(&f->fake->pushes), 1);

	WRITE_ONCE(f->fake->device_reset_error, -EIO);
	KUNIT_EXPECT_EQ(test, rbln_test_ioctl(test, f->file, DRM_IOCTL_RBLN_RESET, &reset), -EIO);
	KUNIT_EXPECT_TRUE(test, READ_ONCE(f->rdev->wedged));
	WRITE_ONCE(f->fake->device_reset_error, 0);
	KUNIT_EXPECT_EQ(test, rbln_test_ioctl(test, f->file, DRM_IOCTL_RBLN_RESET, &reset), 0);
	KUNIT_EXPECT_EQ(test, atomic_read(&f->fake->device_resets), 2);
	KUNIT_EXPECT_FALSE(test, READ_ONCE(f->rdev->wedged));
	KUNIT_EXPECT_EQ(test, rbln_device_status(f->rdev), DRM_RBLN_STATUS_READY);

	KUNIT_EXPECT_EQ(test, run_ab(test, TASK, 0), 0);
}

/*
 * Removal with a job on the engine and one queued behind it: both fences
 * end with -ENODEV by the time removal returns, the engine's job through its
 * reset (the backend lets go of it), the queued one without reaching the
 * backend; the open file gets -ENODEV; no op but mem_free comes after
 * destroy, and every buffer's backing is freed once the file closes
 * (rbln_fake_hw.c checks both).
 */
static void rbln_fake_hw_removal_with_job_in_flight(struct kunit *test)
{
	struct fixture *f = test->priv;
	struct drm_rbln_bo_create bo = { .size = SZ_4K };
	struct dma_fence *running, *queued;

	running = rbln_test_job_fence(test, f->file, submit_ab(test, NEURAL));
	rbln_fake_hw_wait_pushed(f->fake, 0, NEURAL);
	queued = rbln_test_job_fence(test, f->file, submit_ab(test, NEURAL));

	rbln_fake_hw_remove(f->fake);
	KUNIT_EXPECT_EQ(test, dma_fence_get_status(running), -ENODEV);
	KUNIT_EXPECT_EQ(test, dma_fence_get_status(queued), -ENODEV);
	KUNIT_EXPECT_EQ(test, atomic_read(&f->fake->pushes), 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&f->fake->engine_resets), 1);
	KUNIT_EXPECT_EQ(test, atomic_read(&f->fake->sync_irqs), 1);
	KUNIT_EXPECT_EQ(test, rbln_test_ioctl(test, f->file, DRM_IOCTL_RBLN_BO_CREATE, &bo), -ENODEV);

	rbln_test_close(test, f->file);
	KUNIT_EXPECT_EQ(test, atomic_read(&f->fake->bad_calls), 0);
}

static struct kunit_case rbln_fake_hw_cases[] = {
	KUNIT_CASE(rbln_fake_hw_engines_as_declared),
	KUNIT_CASE(rbln_fake_hw_undeclared_engine_refused),
	KUNIT_CASE(rbln_fake_hw_buffers_backed_by_the_backend),
	KUNIT_CASE(rbln_fake_hw_job_ends_by_upcall),
	KUNIT_CASE(rbln_fake_hw_push_fails),
	KUNIT_CASE(rbln_fake_hw_failed_reset_wedges),
	KUNIT_CASE(rbln_fake_hw_removal_with_job_in_flight),
	{}
};

static struct kunit_suite rbln_fake_hw_suite = {
	.name = "rbln_fake_hw",
	.init = rbln_fake_hw_test_init,
	.test_cases = rbln_fake_hw_cases,
};
kunit_test_suite(rbln_fake_hw_suite);
