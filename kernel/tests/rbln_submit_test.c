// SPDX-License-Identifier: GPL-2.0-only
/*
 * SUBMIT and WAIT: every validation rule, checked before anything runs, and
 * what a job does when it runs (bytes copied, faults, a hung engine).
 */
#include <kunit/test.h>
#include <linux/sched.h>
#include <linux/sizes.h>
#include <linux/uaccess.h>

#include "rbln_kunit_sim.h"

#define NEURAL	DRM_RBLN_ENGINE_NEURAL_DMA
#define TASK	DRM_RBLN_ENGINE_TASK_DMA
#define DHDMA	DRM_RBLN_ENGINE_DEVICE_HDMA
#define EHDMA	DRM_RBLN_ENGINE_EXTERNAL_HDMA

/* A Rebel100 with a host buffer and device buffers on chiplets 0, 1 and interleaved. */
struct fixture {
	struct rbln_device *rdev;
	struct file *file;
	u32 host, c0, c1, il;
};

static int rbln_submit_init(struct kunit *test)
{
	struct fixture *f = kunit_kzalloc(test, sizeof(*f), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, f);
	f->rdev = rbln_test_device(test, "rebel100 64");
	f->file = rbln_test_open(test, f->rdev);
	f->host = rbln_test_bo(test, f->file, SZ_64K, 0, DRM_RBLN_BO_HOST);
	f->c0 = rbln_test_bo(test, f->file, SZ_64K, 0, 0);
	f->c1 = rbln_test_bo(test, f->file, SZ_64K, 1, 0);
	f->il = rbln_test_bo(test, f->file, SZ_64K, DRM_RBLN_CHIPLET_INTERLEAVED, 0);
	test->priv = f;
	return 0;
}

/* Puts @n copies, @stride bytes apart, in user memory. */
static u64 user_copies(struct kunit *test, const struct drm_rbln_copy *copies, u32 n, u32 stride)
{
	char __user *u = rbln_test_user(test, (size_t)n * stride);
	u32 i;

	for (i = 0; i < n; i++)
		KUNIT_ASSERT_EQ(test, copy_to_user(u + (size_t)i * stride, &copies[i],
						   sizeof(copies[i])), 0);
	return (u64)(uintptr_t)u;
}

static struct drm_rbln_submit job(struct kunit *test, u32 engine, u32 chiplet,
				  const struct drm_rbln_copy *copies, u32 n)
{
	return (struct drm_rbln_submit){
		.engine = engine, .chiplet = chiplet, .copy_count = n,
		.copy_size = sizeof(*copies),
		.copies = user_copies(test, copies, n, sizeof(*copies)),
	};
}

static int submit(struct kunit *test, struct drm_rbln_submit *args)
{
	struct fixture *f = test->priv;

	return rbln_test_ioctl(test, f->file, DRM_IOCTL_RBLN_SUBMIT, args);
}

/* SUBMIT with the simulator's no_direct set: the job goes to the scheduler. */
static int submit_scheduled(struct kunit *test, struct drm_rbln_submit *args)
{
	struct fixture *f = test->priv;
	int ret;

	WRITE_ONCE(rbln_test_sim(f->rdev)->no_direct, true);
	ret = submit(test, args);
	WRITE_ONCE(rbln_test_sim(f->rdev)->no_direct, false);
	return ret;
}

static int wait(struct kunit *test, u64 seqno, int *status)
{
	struct fixture *f = test->priv;
	struct drm_rbln_wait args = { .seqno = seqno, .timeout_ns = 10LL * NSEC_PER_SEC };
	int ret = rbln_test_ioctl(test, f->file, DRM_IOCTL_RBLN_WAIT, &args);

	*status = args.status;
	return ret;
}

static struct drm_rbln_copy copy(u32 src, u32 dst, u64 size)
{
	return (struct drm_rbln_copy){ .src_handle = src, .dst_handle = dst, .size = size };
}

static void rbln_submit_rejects_bad_arguments(struct kunit *test)
{
	struct fixture *f = test->priv;
	struct drm_rbln_copy c = copy(f->c0, f->il, PAGE_SIZE);
	const char *why = NULL;
	unsigned int i;

	for (i = 0; ; i++) {
		struct drm_rbln_submit a = job(test, NEURAL, 0, &c, 1);

		switch (i) {
		case 0: why = "unknown flag"; a.flags = ~DRM_RBLN_SUBMIT_FLAGS & (DRM_RBLN_SUBMIT_FLAGS + 1); break;
		case 1: why = "reserved set"; a.reserved = 1; break;
		case 2: why = "no copies"; a.copy_count = 0; break;
		case 3: why = "too many copies"; a.copy_count = DRM_RBLN_MAX_COPIES + 1; break;
		case 4: why = "copy_size too small"; a.copy_size = sizeof(c) - 1; break;
		case 5: why = "copy_size over a page"; a.copy_size = PAGE_SIZE + 8; break;
		case 6: why = "chiplet out of range"; a.chiplet = 4; break;
		case 7: why = "chiplet interleaved"; a.chiplet = DRM_RBLN_CHIPLET_INTERLEAVED; break;
		case 8: why = "engine out of range"; a.engine = DRM_RBLN_ENGINE_COUNT; break;
		case 9: why = "External HDMA on chiplet 1"; a.engine = EHDMA; a.chiplet = 1; break;
		default: return;
		}
		KUNIT_EXPECT_EQ_MSG(test, submit(test, &a), -EINVAL, "%s", why);
		KUNIT_EXPECT_EQ_MSG(test, a.seqno, 0ULL, "%s: no job number", why);
	}
}

static void rbln_submit_rejects_bad_pointers(struct kunit *test)
{
	struct fixture *f = test->priv;
	struct drm_rbln_copy c = copy(f->c0, f->il, PAGE_SIZE);
	char __user *label = rbln_test_user(test, DRM_RBLN_LABEL_MAX + 1);
	struct drm_rbln_submit a;
	char text[DRM_RBLN_LABEL_MAX];

	a = job(test, NEURAL, 0, &c, 1);
	a.copies = 0x10;
	KUNIT_EXPECT_EQ(test, submit(test, &a), -EFAULT);

	a = job(test, NEURAL, 0, &c, 1);
	a.label = 0x10;
	KUNIT_EXPECT_EQ(test, submit(test, &a), -EFAULT);

	/* A label must end within DRM_RBLN_LABEL_MAX bytes, NUL included. */
	memset(text, 'x', sizeof(text));
	KUNIT_ASSERT_EQ(test, copy_to_user(label, text, sizeof(text)), 0);
	a = job(test, NEURAL, 0, &c, 1);
	a.label = (u64)(uintptr_t)label;
	KUNIT_EXPECT_EQ(test, submit(test, &a), -EINVAL);
	KUNIT_ASSERT_EQ(test, put_user(0, label + DRM_RBLN_LABEL_MAX - 1), 0);
	KUNIT_EXPECT_EQ(test, submit(test, &a), 0);
}

/* A caller with a larger descriptor may use it, but its extra fields must be zero. */
static void rbln_submit_larger_copy_size(struct kunit *test)
{
	struct fixture *f = test->priv;
	struct drm_rbln_copy c = copy(f->c0, f->il, PAGE_SIZE);
	const u32 stride = sizeof(c) + 16;
	struct drm_rbln_submit a = {
		.engine = NEURAL, .copy_count = 1, .copy_size = stride,
		.copies = user_copies(test, &c, 1, stride),
	};
	char __user *tail = u64_to_user_ptr(a.copies) + sizeof(c);

	KUNIT_EXPECT_EQ(test, submit(test, &a), 0);
	KUNIT_ASSERT_EQ(test, put_user(1, tail + 15), 0);
	KUNIT_EXPECT_EQ(test, submit(test, &a), -EINVAL);
}

static void rbln_submit_rejects_bad_copies(struct kunit *test)
{
	struct fixture *f = test->priv;
	struct file *other = rbln_test_open(test, f->rdev);
	u32 foreign = 0, i;
	struct {
		const char *why;
		struct drm_rbln_copy c;
		int err;
	} cases[] = {
		{ "zero size", copy(f->c0, f->il, 0), -EINVAL },
		{ "unknown source", copy(f->il + 100, f->c0, 8), -ENOENT },
		{ "unknown destination", copy(f->c0, 0, 8), -ENOENT },
		{ "another file's handle", copy(foreign, f->c0, 8), -ENOENT },
		{ "source past the end", { .src_handle = f->c0, .dst_handle = f->il,
					   .src_offset = SZ_64K - 8, .size = 16 }, -EINVAL },
		{ "destination past the end", { .src_handle = f->c0, .dst_handle = f->il,
						.dst_offset = SZ_64K, .size = 1 }, -EINVAL },
		{ "offset + size overflows", { .src_handle = f->c0, .dst_handle = f->il,
					       .src_offset = U64_MAX - 7, .size = 16 }, -EINVAL },
		{ "size larger than the buffer", copy(f->c0, f->il, SZ_64K + 1), -EINVAL },
		{ "overlap within one buffer", { .src_handle = f->c0, .dst_handle = f->c0,
						 .src_offset = 0, .dst_offset = 8, .size = 16 },
		  -EINVAL },
		{ "no overlap within one buffer", { .src_handle = f->c0, .dst_handle = f->c0,
						    .src_offset = 0, .dst_offset = 16, .size = 16 },
		  0 },
	};

	/* Handle numbers are per file: take one that exists only in the other file. */
	for (i = 0; i < 5; i++)
		foreign = rbln_test_bo(test, other, PAGE_SIZE, 0, 0);
	KUNIT_ASSERT_GT(test, foreign, f->il);
	cases[3].c.src_handle = foreign;
	KUNIT_ASSERT_STREQ(test, cases[3].why, "another file's handle");

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		struct drm_rbln_submit a = job(test, NEURAL, 0, &cases[i].c, 1);

		KUNIT_EXPECT_EQ_MSG(test, submit(test, &a), cases[i].err, "%s", cases[i].why);
	}
}

/* Which memory each engine may touch (struct drm_rbln_copy in the UAPI). */
static void rbln_submit_engine_reach(struct kunit *test)
{
	struct fixture *f = test->priv;
	const struct {
		u32 engine, chiplet, src, dst;
		bool ok;
	} cases[] = {
		{ EHDMA, 0, f->host, f->c0, true },
		{ EHDMA, 0, f->c0, f->host, true },
		{ EHDMA, 0, f->host, f->il, true },
		{ EHDMA, 0, f->host, f->c1, false },	/* External HDMA reaches chiplet 0 only */
		{ EHDMA, 0, f->c0, f->il, false },	/* device to device is not its job */
		{ EHDMA, 0, f->host, f->host, false },
		{ TASK, 0, f->c0, f->c1, true },	/* chiplet to chiplet */
		{ TASK, 1, f->c0, f->c1, true },
		{ TASK, 2, f->c0, f->c1, false },	/* neither end on chiplet 2 */
		{ TASK, 2, f->il, f->c1, true },
		{ TASK, 0, f->host, f->c0, false },
		{ NEURAL, 1, f->c1, f->il, true },
		{ NEURAL, 1, f->c0, f->c1, false },
		{ NEURAL, 0, f->host, f->c0, false },
		{ DHDMA, 1, f->il, f->c1, true },
		{ DHDMA, 0, f->c1, f->c0, false },
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		struct drm_rbln_copy c = copy(cases[i].src, cases[i].dst, 64);
		struct drm_rbln_submit a = job(test, cases[i].engine, cases[i].chiplet, &c, 1);

		KUNIT_EXPECT_EQ_MSG(test, submit(test, &a), cases[i].ok ? 0 : -EINVAL,
				    "case %u: engine %u chiplet %u", i, cases[i].engine,
				    cases[i].chiplet);
	}
}

/* One bad copy rejects the job before any copy runs, and uses no job number. */
static void rbln_submit_all_or_nothing(struct kunit *test)
{
	struct fixture *f = test->priv;
	struct rbln_bo *src = rbln_test_lookup(test, f->file, f->c0);
	struct rbln_bo *dst = rbln_test_lookup(test, f->file, f->il);
	struct drm_rbln_copy c[2] = { copy(f->c0, f->il, 64), copy(f->c0, f->il, SZ_128K) };
	struct drm_rbln_submit a = job(test, NEURAL, 0, c, 2);
	int status;

	memset(src->vaddr, 0xab, 64);
	memset(dst->vaddr, 0, 64);
	KUNIT_EXPECT_EQ(test, submit(test, &a), -EINVAL);
	KUNIT_EXPECT_NULL(test, memchr_inv(dst->vaddr, 0, 64));

	a = job(test, NEURAL, 0, c, 1);
	KUNIT_ASSERT_EQ(test, submit(test, &a), 0);
	KUNIT_EXPECT_EQ(test, a.seqno, 1ULL);
	KUNIT_ASSERT_EQ(test, wait(test, a.seqno, &status), 0);
	KUNIT_EXPECT_EQ(test, status, 0);
	KUNIT_EXPECT_NULL(test, memchr_inv(dst->vaddr, 0xab, 64));
}

/*
 * Jobs the backend will not run inside SUBMIT (the simulator's no_direct) go
 * through the engine's queue (with REPORT_END a job run inside SUBMIT says
 * so; one of 64 KiB does); bytes arrive, busy time counts.
 */
static void rbln_submit_queued_job_copies(struct kunit *test)
{
	/* Three copies, 80 KiB. */
	const u32 n = 3;
	struct fixture *f = test->priv;
	struct rbln_bo *src = rbln_test_lookup(test, f->file, f->host);
	struct rbln_bo *c0 = rbln_test_lookup(test, f->file, f->c0);
	struct rbln_bo *il = rbln_test_lookup(test, f->file, f->il);
	struct drm_rbln_copy *c = kunit_kcalloc(test, n, sizeof(*c), GFP_KERNEL);
	struct drm_rbln_submit a, direct;
	struct rbln_engine *engine = &f->rdev->chiplets[0].engines[EHDMA];
	u64 busy;
	u32 i;
	int status;

	KUNIT_ASSERT_NOT_NULL(test, c);
	c[0] = (struct drm_rbln_copy){ .src_handle = f->host, .dst_handle = f->c0,
				       .size = SZ_32K + SZ_16K };
	c[1] = (struct drm_rbln_copy){ .src_handle = f->host, .dst_handle = f->c0,
				       .src_offset = SZ_32K, .dst_offset = SZ_32K + SZ_16K,
				       .size = SZ_16K };
	for (i = 2; i < n; i++)
		c[i] = (struct drm_rbln_copy){ .src_handle = f->host, .dst_handle = f->il,
					       .size = SZ_16K };
	a = job(test, EHDMA, 0, c, n);
	direct = job(test, EHDMA, 0, c, 2);

	for (i = 0; i < SZ_64K; i++)
		((u8 *)src->vaddr)[i] = i * 7 + i / 251;
	direct.flags = DRM_RBLN_SUBMIT_REPORT_END;
	KUNIT_ASSERT_EQ(test, submit(test, &direct), 0);
	KUNIT_EXPECT_EQ_MSG(test, direct.ended, 1U, "64 KiB for an idle engine runs inside SUBMIT");
	memset(c0->vaddr, 0, SZ_64K);
	busy = atomic64_read(&engine->busy_ns);
	a.flags = DRM_RBLN_SUBMIT_REPORT_END;
	KUNIT_ASSERT_EQ(test, submit_scheduled(test, &a), 0);
	KUNIT_EXPECT_EQ_MSG(test, a.ended, 0U, "with no_direct the job is queued");
	KUNIT_ASSERT_EQ(test, wait(test, a.seqno, &status), 0);
	KUNIT_EXPECT_EQ(test, status, 0);
	KUNIT_EXPECT_EQ(test, memcmp(c0->vaddr, src->vaddr, SZ_32K + SZ_16K), 0);
	KUNIT_EXPECT_EQ(test, memcmp(c0->vaddr + SZ_32K + SZ_16K, src->vaddr + SZ_32K, SZ_16K), 0);
	KUNIT_EXPECT_EQ(test, memcmp(il->vaddr, src->vaddr, SZ_16K), 0);
	KUNIT_EXPECT_GT(test, atomic64_read(&engine->busy_ns), busy);
}

/*
 * The direct path takes the simulator's whole job limit: a job of exactly its
 * bytes for an idle engine ends inside SUBMIT, the same job with no_direct
 * goes to the scheduler, both copy every byte; one byte more is over the job
 * limit and refused on either path.
 */
static void rbln_submit_direct_path_limit(struct kunit *test)
{
	const u32 n = RBLN_SIM_JOB_MAX_BYTES / SZ_64K;
	struct fixture *f = test->priv;
	struct rbln_bo *src = rbln_test_lookup(test, f->file, f->c0);
	struct rbln_bo *dst = rbln_test_lookup(test, f->file, f->il);
	struct drm_rbln_copy *c = kunit_kcalloc(test, n + 1, sizeof(*c), GFP_KERNEL);
	struct drm_rbln_submit a;
	int status;
	u32 i;

	BUILD_BUG_ON(RBLN_SIM_JOB_MAX_BYTES > RBLN_HW_RUN_NOW_MAX_BYTES);
	KUNIT_ASSERT_NOT_NULL(test, c);
	for (i = 0; i < n; i++)
		c[i] = copy(f->c0, f->il, SZ_64K);
	c[n] = copy(f->c0, f->il, 1);
	memset(src->vaddr, 0x3c, SZ_64K);
	a = job(test, NEURAL, 0, c, n);
	a.flags = DRM_RBLN_SUBMIT_REPORT_END;
	KUNIT_ASSERT_EQ(test, submit(test, &a), 0);
	KUNIT_EXPECT_EQ_MSG(test, a.ended, 1U, "a job of the limit's bytes runs inside SUBMIT");
	KUNIT_EXPECT_EQ(test, a.status, 0);
	KUNIT_EXPECT_NULL(test, memchr_inv(dst->vaddr, 0x3c, SZ_64K));

	memset(src->vaddr, 0xc3, SZ_64K);
	a = job(test, NEURAL, 0, c, n);
	a.flags = DRM_RBLN_SUBMIT_REPORT_END;
	KUNIT_ASSERT_EQ(test, submit_scheduled(test, &a), 0);
	KUNIT_EXPECT_EQ_MSG(test, a.ended, 0U, "with no_direct it is scheduled");
	KUNIT_ASSERT_EQ(test, wait(test, a.seqno, &status), 0);
	KUNIT_EXPECT_EQ(test, status, 0);
	KUNIT_EXPECT_NULL(test, memchr_inv(dst->vaddr, 0xc3, SZ_64K));

	a = job(test, NEURAL, 0, c, n + 1);
	KUNIT_EXPECT_EQ_MSG(test, submit(test, &a), -EINVAL, "one byte over the job limit");
	KUNIT_EXPECT_EQ(test, submit_scheduled(test, &a), -EINVAL);
}

/*
 * The direct path gives way: while another SUBMIT is on its way to queue a
 * job for the engine, a small job is scheduled; for a task that asked for
 * less CPU (nice 10), so is one over RBLN_HW_RUN_NOW_ANY_TASK_BYTES, not a
 * small one; at a full share again the big one runs inside SUBMIT.
 */
static void rbln_submit_direct_path_gives_way(struct kunit *test)
{
	const u32 n = RBLN_HW_RUN_NOW_ANY_TASK_BYTES / SZ_64K + 1;
	struct fixture *f = test->priv;
	struct rbln_engine *engine = &f->rdev->chiplets[0].engines[NEURAL];
	struct drm_rbln_copy *big = kunit_kcalloc(test, n, sizeof(*big), GFP_KERNEL);
	const struct drm_rbln_copy small = copy(f->c0, f->il, SZ_4K);
	const long nice = task_nice(current);
	struct drm_rbln_submit a, b;
	int ret, status;
	u32 i;

	KUNIT_ASSERT_NOT_NULL(test, big);
	KUNIT_ASSERT_LE(test, nice, 0L);
	for (i = 0; i < n; i++)
		big[i] = copy(f->c0, f->il, SZ_64K);

	a = job(test, NEURAL, 0, &small, 1);
	a.flags = DRM_RBLN_SUBMIT_REPORT_END;
	atomic_inc(&engine->waiting);
	ret = submit(test, &a);
	atomic_dec(&engine->waiting);
	KUNIT_ASSERT_EQ(test, ret, 0);
	KUNIT_EXPECT_EQ_MSG(test, a.ended, 0U, "another SUBMIT is on its way to the engine");
	KUNIT_ASSERT_EQ(test, wait(test, a.seqno, &status), 0);
	KUNIT_EXPECT_EQ(test, status, 0);

	a = job(test, NEURAL, 0, big, n);
	a.flags = DRM_RBLN_SUBMIT_REPORT_END;
	b = job(test, NEURAL, 0, &small, 1);
	b.flags = DRM_RBLN_SUBMIT_REPORT_END;
	set_user_nice(current, 10);
	ret = submit(test, &a);
	if (!ret) {
		KUNIT_EXPECT_EQ(test, wait(test, a.seqno, &status), 0);
		ret = submit(test, &b);
	}
	set_user_nice(current, nice);
	KUNIT_ASSERT_EQ(test, ret, 0);
	KUNIT_EXPECT_EQ_MSG(test, a.ended, 0U, "a niced task's big job is scheduled");
	KUNIT_EXPECT_EQ_MSG(test, b.ended, 1U, "a niced task's small job is not");

	a = job(test, NEURAL, 0, big, n);
	a.flags = DRM_RBLN_SUBMIT_REPORT_END;
	KUNIT_ASSERT_EQ(test, submit(test, &a), 0);
	KUNIT_EXPECT_EQ(test, a.ended, 1U);
}

static void rbln_wait_rejects_bad_arguments(struct kunit *test)
{
	struct fixture *f = test->priv;
	struct drm_rbln_copy c = copy(f->c0, f->il, 64);
	struct drm_rbln_submit a = job(test, NEURAL, 0, &c, 1);
	struct drm_rbln_wait w;

	KUNIT_ASSERT_EQ(test, submit(test, &a), 0);
	w = (struct drm_rbln_wait){ .seqno = a.seqno, .flags = 1 };
	KUNIT_EXPECT_EQ(test, rbln_test_ioctl(test, f->file, DRM_IOCTL_RBLN_WAIT, &w), -EINVAL);
	w = (struct drm_rbln_wait){ .seqno = 0 };
	KUNIT_EXPECT_EQ(test, rbln_test_ioctl(test, f->file, DRM_IOCTL_RBLN_WAIT, &w), -EINVAL);
	w = (struct drm_rbln_wait){ .seqno = a.seqno + 1 };
	KUNIT_EXPECT_EQ(test, rbln_test_ioctl(test, f->file, DRM_IOCTL_RBLN_WAIT, &w), -EINVAL);
	w = (struct drm_rbln_wait){ .seqno = a.seqno, .timeout_ns = -1 };
	KUNIT_EXPECT_EQ(test, rbln_test_ioctl(test, f->file, DRM_IOCTL_RBLN_WAIT, &w), -EINVAL);
}

/* fail_next_jobs: the job fails with -EIO, reported once; the next one works. */
static void rbln_submit_injected_failure(struct kunit *test)
{
	struct fixture *f = test->priv;
	struct drm_rbln_copy c = copy(f->c0, f->il, 64);
	struct drm_rbln_submit a = job(test, NEURAL, 0, &c, 1);
	int status;

	rbln_sim_fail_next_jobs(f->rdev, 1);
	KUNIT_ASSERT_EQ(test, submit(test, &a), 0);
	KUNIT_ASSERT_EQ(test, wait(test, a.seqno, &status), 0);
	KUNIT_EXPECT_EQ(test, status, -EIO);
	KUNIT_ASSERT_EQ(test, wait(test, a.seqno, &status), 0);
	KUNIT_EXPECT_EQ(test, status, 0);
	KUNIT_ASSERT_EQ(test, submit(test, &a), 0);
	KUNIT_ASSERT_EQ(test, wait(test, a.seqno, &status), 0);
	KUNIT_EXPECT_EQ(test, status, 0);
}

/* Failed jobs nobody waits for count against the cap until they are waited for. */
static void rbln_submit_failed_jobs_are_capped(struct kunit *test)
{
	struct fixture *f = test->priv;
	struct drm_rbln_copy c = copy(f->c0, f->il, 64);
	struct drm_rbln_submit a = job(test, NEURAL, 0, &c, 1);
	u64 first = 0;
	int i, status;

	rbln_sim_fail_next_jobs(f->rdev, DRM_RBLN_MAX_INFLIGHT + 1);
	for (i = 0; i < DRM_RBLN_MAX_INFLIGHT; i++) {
		KUNIT_ASSERT_EQ_MSG(test, submit(test, &a), 0, "job %d", i);
		first = first ?: a.seqno;
	}
	KUNIT_EXPECT_EQ(test, submit(test, &a), -ENOSPC);
	KUNIT_ASSERT_EQ(test, wait(test, first, &status), 0);
	KUNIT_EXPECT_EQ(test, status, -EIO);
	KUNIT_EXPECT_EQ(test, submit(test, &a), 0);	/* room for one again */
	KUNIT_EXPECT_EQ(test, submit(test, &a), -ENOSPC);
	rbln_sim_fail_next_jobs(f->rdev, 0);
}

static void rbln_submit_chiplet_down(struct kunit *test)
{
	struct fixture *f = test->priv;
	struct drm_rbln_copy c = copy(f->c1, f->il, 64);
	struct drm_rbln_submit a = job(test, NEURAL, 1, &c, 1);

	rbln_sim_set_chiplet_down(f->rdev, 1, true);
	KUNIT_EXPECT_EQ(test, submit(test, &a), -ENODEV);
	rbln_sim_set_chiplet_down(f->rdev, 1, false);
	KUNIT_EXPECT_EQ(test, submit(test, &a), 0);
}

/* A hung engine: the job times out, the engine is reset and works again. */
static void rbln_submit_hung_engine_times_out(struct kunit *test)
{
	struct fixture *f = test->priv;
	struct rbln_engine *engine = &f->rdev->chiplets[2].engines[DHDMA];
	struct drm_rbln_copy c = copy(f->il, f->il, 64);
	struct drm_rbln_submit a;
	int status;

	c.dst_offset = 64;
	a = job(test, DHDMA, 2, &c, 1);
	rbln_sim_set_hang(f->rdev, 2, DHDMA, true);
	KUNIT_ASSERT_EQ(test, submit(test, &a), 0);
	KUNIT_ASSERT_EQ(test, wait(test, a.seqno, &status), 0);
	KUNIT_EXPECT_EQ(test, status, -ETIMEDOUT);
	KUNIT_EXPECT_EQ(test, atomic_read(&engine->resets), 1);
	KUNIT_EXPECT_FALSE(test, READ_ONCE(rbln_test_sim(f->rdev)->engines[2][DHDMA].hung));
	KUNIT_ASSERT_EQ(test, submit(test, &a), 0);
	KUNIT_ASSERT_EQ(test, wait(test, a.seqno, &status), 0);
	KUNIT_EXPECT_EQ(test, status, 0);
}

static struct kunit_case rbln_submit_cases[] = {
	KUNIT_CASE(rbln_submit_rejects_bad_arguments),
	KUNIT_CASE(rbln_submit_rejects_bad_pointers),
	KUNIT_CASE(rbln_submit_larger_copy_size),
	KUNIT_CASE(rbln_submit_rejects_bad_copies),
	KUNIT_CASE(rbln_submit_engine_reach),
	KUNIT_CASE(rbln_submit_all_or_nothing),
	KUNIT_CASE(rbln_submit_queued_job_copies),
	KUNIT_CASE(rbln_submit_direct_path_limit),
	KUNIT_CASE(rbln_submit_direct_path_gives_way),
	KUNIT_CASE(rbln_wait_rejects_bad_arguments),
	KUNIT_CASE(rbln_submit_injected_failure),
	KUNIT_CASE(rbln_submit_failed_jobs_are_capped),
	KUNIT_CASE(rbln_submit_chiplet_down),
	KUNIT_CASE(rbln_submit_hung_engine_times_out),
	{}
};

static struct kunit_suite rbln_submit_suite = {
	.name = "rbln_submit",
	.init = rbln_submit_init,
	.test_cases = rbln_submit_cases,
};
kunit_test_suite(rbln_submit_suite);
