// SPDX-License-Identifier: GPL-2.0-only
/*
 * SUBMIT_BATCH: its own validation, each element submitted as SUBMIT would
 * submit it and in order (a job waits for an earlier element's out_sync), the
 * out fields written back and nothing else, and a refused element stopping
 * the batch with the ones before it submitted and counted (a short count, not
 * an error, so no retry submits them twice).
 */
#include <kunit/test.h>
#include <linux/file.h>
#include <linux/fs.h>
#include <linux/mm.h>
#include <linux/mman.h>
#include <linux/shmem_fs.h>
#include <linux/sizes.h>
#include <linux/uaccess.h>
#include <drm/drm.h>

#include "rbln_kunit_sim.h"

#define NEURAL	DRM_RBLN_ENGINE_NEURAL_DMA
#define TASK	DRM_RBLN_ENGINE_TASK_DMA
#define EHDMA	DRM_RBLN_ENGINE_EXTERNAL_HDMA

/* The Rebel100 chain's buffers: chiplet 1 -> chiplet 1 -> chiplet 0 -> host. */
struct fixture {
	struct rbln_device *rdev;
	struct file *file;
	u32 n_src, n_dst, gather, host;
	u32 sync[2];
};

#define CHAIN_BYTES	SZ_1M

static u32 syncobj(struct kunit *test, struct file *file)
{
	struct drm_syncobj_create c = {};

	KUNIT_ASSERT_EQ(test, rbln_test_ioctl(test, file, DRM_IOCTL_SYNCOBJ_CREATE, &c), 0);
	return c.handle;
}

static int rbln_batch_init(struct kunit *test)
{
	struct fixture *f = kunit_kzalloc(test, sizeof(*f), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, f);
	f->rdev = rbln_test_device(test, "rebel100 64");
	f->file = rbln_test_open(test, f->rdev);
	f->n_src = rbln_test_bo(test, f->file, CHAIN_BYTES, 1, 0);
	f->n_dst = rbln_test_bo(test, f->file, CHAIN_BYTES, 1, 0);
	f->gather = rbln_test_bo(test, f->file, CHAIN_BYTES, 0, 0);
	f->host = rbln_test_bo(test, f->file, CHAIN_BYTES, 0, DRM_RBLN_BO_HOST);
	f->sync[0] = syncobj(test, f->file);
	f->sync[1] = syncobj(test, f->file);
	test->priv = f;
	return 0;
}

/* One element: a copy of @size bytes, waiting for @in and signalling @out (0: none). */
static struct drm_rbln_submit element(struct kunit *test, u32 engine, u32 chiplet, u32 src,
				      u32 dst, u64 size, u32 in, u32 out)
{
	struct drm_rbln_copy c = { .src_handle = src, .dst_handle = dst, .size = size };
	struct drm_rbln_sync wait_for = { .handle = in };

	return (struct drm_rbln_submit){
		.engine = engine, .chiplet = chiplet,
		.copies = (u64)(uintptr_t)rbln_test_user_copy(test, &c, sizeof(c)),
		.copy_count = 1, .copy_size = sizeof(c),
		.in_syncs = in ? (u64)(uintptr_t)rbln_test_user_copy(test, &wait_for,
								      sizeof(wait_for)) : 0,
		.in_sync_count = in ? 1 : 0,
		.out_sync.handle = out,
		.flags = DRM_RBLN_SUBMIT_REPORT_END,
	};
}

/* The chain of three jobs of @size bytes, joined by the fixture's syncobjs. */
static void chain(struct kunit *test, struct drm_rbln_submit *e, u64 size)
{
	struct fixture *f = test->priv;

	e[0] = element(test, NEURAL, 1, f->n_src, f->n_dst, size, 0, f->sync[0]);
	e[1] = element(test, TASK, 0, f->n_dst, f->gather, size, f->sync[0], f->sync[1]);
	e[2] = element(test, EHDMA, 0, f->gather, f->host, size, f->sync[1], 0);
}

/*
 * The @n elements at @e in user memory, @stride bytes apart, the bytes beyond
 * the struct set to @fill.
 */
static char __user *layout(struct kunit *test, const struct drm_rbln_submit *e, u32 n, u32 stride,
			   u8 fill)
{
	char __user *u = rbln_test_user(test, (size_t)n * stride);
	size_t known = min_t(size_t, stride, sizeof(*e));
	char *pad = kunit_kzalloc(test, stride, GFP_KERNEL);
	u32 i;

	KUNIT_ASSERT_NOT_NULL(test, pad);
	memset(pad, fill, stride);
	for (i = 0; i < n; i++) {
		KUNIT_ASSERT_EQ(test, copy_to_user(u + (size_t)i * stride, pad, stride), 0);
		KUNIT_ASSERT_EQ(test, copy_to_user(u + (size_t)i * stride, &e[i], known), 0);
	}
	return u;
}

/* SUBMIT_BATCH of the elements at @u; what it wrote back is copied into @e. */
static int run(struct kunit *test, char __user *u, struct drm_rbln_submit *e, u32 n, u32 stride,
	       struct drm_rbln_submit_batch *b)
{
	struct fixture *f = test->priv;
	size_t known = min_t(size_t, stride, sizeof(*e));
	int ret;
	u32 i;

	*b = (struct drm_rbln_submit_batch){
		.submits = (u64)(uintptr_t)u, .count = n, .submit_size = stride,
		.submitted = 99, .error = 99,
	};
	ret = rbln_test_ioctl(test, f->file, DRM_IOCTL_RBLN_SUBMIT_BATCH, b);
	for (i = 0; i < n; i++)
		KUNIT_ASSERT_EQ(test, copy_from_user(&e[i], u + (size_t)i * stride, known), 0);
	return ret;
}

static int batch(struct kunit *test, struct drm_rbln_submit *e, u32 n, u32 stride, u8 fill,
		 struct drm_rbln_submit_batch *b)
{
	return run(test, layout(test, e, n, stride, fill), e, n, stride, b);
}

static int wait(struct kunit *test, u64 seqno, int *status)
{
	struct fixture *f = test->priv;
	struct drm_rbln_wait args = { .seqno = seqno, .timeout_ns = 10LL * NSEC_PER_SEC };
	int ret = rbln_test_ioctl(test, f->file, DRM_IOCTL_RBLN_WAIT, &args);

	*status = args.status;
	return ret;
}

static void fill_source(struct kunit *test, u64 size)
{
	struct fixture *f = test->priv;
	u8 *src = rbln_test_lookup(test, f->file, f->n_src)->vaddr;
	u64 i;

	for (i = 0; i < size; i++)
		src[i] = i * 13 + i / 509;
}

static bool arrived(struct kunit *test, u64 size)
{
	struct fixture *f = test->priv;

	return !memcmp(rbln_test_lookup(test, f->file, f->host)->vaddr,
		       rbln_test_lookup(test, f->file, f->n_src)->vaddr, size);
}

/* @size bytes of @data in a read-only mapping of a file. */
static u64 read_only_copy(struct kunit *test, const void *data, size_t size)
{
	struct file *shm = shmem_file_setup("rbln-batch-test", PAGE_SIZE, 0);
	unsigned long addr;
	loff_t pos = 0;

	KUNIT_ASSERT_FALSE(test, IS_ERR(shm));
	KUNIT_ASSERT_EQ(test, kernel_write(shm, data, size, &pos), (ssize_t)size);
	addr = kunit_vm_mmap(test, shm, 0, PAGE_SIZE, PROT_READ, MAP_SHARED, 0);
	fput(shm);			/* the mapping holds it */
	KUNIT_ASSERT_NE(test, addr, 0UL);
	return addr;
}

static void rbln_batch_rejects_bad_arguments(struct kunit *test)
{
	struct fixture *f = test->priv;
	struct drm_rbln_submit e[3];
	struct drm_rbln_submit_batch b;
	const char *why = NULL;
	unsigned int i;

	for (i = 0; ; i++) {
		u32 stride = sizeof(e[0]);

		/* Elements that would go in but for the rule under test. */
		chain(test, e, SZ_4K);
		e[0].flags = e[1].flags = e[2].flags = 0;
		switch (i) {
		case 0: why = "no elements"; break;
		case 1: why = "too many elements"; break;
		case 2: why = "element smaller than the first SUBMIT"; stride = 40; break;
		case 3: why = "element over 4096 bytes"; stride = SZ_4K + 8; break;
		case 4: why = "element size not a multiple of 8"; stride = sizeof(e[0]) + 4; break;
		case 5: why = "unknown flag"; break;
		case 6: why = "reserved set"; break;
		default: goto done;
		}
		b = (struct drm_rbln_submit_batch){
			.submits = (u64)(uintptr_t)layout(test, e, 3, stride, 0),
			.count = i == 0 ? 0 : i == 1 ? DRM_RBLN_MAX_BATCH + 1 : 3,
			.submit_size = stride, .flags = i == 5, .reserved = i == 6,
			.submitted = 7, .error = 7,
		};
		KUNIT_EXPECT_EQ_MSG(test, rbln_test_ioctl(test, f->file, DRM_IOCTL_RBLN_SUBMIT_BATCH, &b),
				    -EINVAL, "%s", why);
		KUNIT_EXPECT_EQ_MSG(test, b.submitted, 0U, "%s", why);
		KUNIT_EXPECT_EQ_MSG(test, b.error, 0, "%s", why);
	}
done:
	KUNIT_EXPECT_EQ(test, rbln_test_client(f->file)->last_seqno, 0ULL);
	b = (struct drm_rbln_submit_batch){ .submits = 0x10, .count = 3, .submit_size = sizeof(e[0]) };
	KUNIT_EXPECT_EQ(test, rbln_test_ioctl(test, f->file, DRM_IOCTL_RBLN_SUBMIT_BATCH, &b), -EFAULT);
	KUNIT_EXPECT_EQ(test, b.submitted, 0U);
	/* A good element that cannot be written back is refused before it goes in. */
	b.submits = read_only_copy(test, e, sizeof(e));
	KUNIT_EXPECT_EQ(test, rbln_test_ioctl(test, f->file, DRM_IOCTL_RBLN_SUBMIT_BATCH, &b), -EFAULT);
	KUNIT_EXPECT_EQ(test, b.submitted, 0U);
	KUNIT_EXPECT_EQ(test, rbln_test_client(f->file)->last_seqno, 0ULL);
}

/* An element the caller cannot read stops the batch there. */
static void rbln_batch_stops_at_an_unmapped_element(struct kunit *test)
{
	struct fixture *f = test->priv;
	struct drm_rbln_submit e[3];
	struct drm_rbln_submit_batch b;
	char __user *u = rbln_test_user(test, 2 * PAGE_SIZE);
	char __user *first = u + PAGE_SIZE - sizeof(e[0]);

	chain(test, e, SZ_4K);
	KUNIT_ASSERT_EQ(test, copy_to_user(first, e, sizeof(e[0])), 0);
	/* Not unmapped: the next mapping (the ioctl's own arguments) could land there. */
	KUNIT_ASSERT_EQ(test, kunit_vm_mmap(test, NULL, (unsigned long)u + PAGE_SIZE, PAGE_SIZE,
					    PROT_NONE, MAP_ANONYMOUS | MAP_PRIVATE | MAP_FIXED, 0),
			(unsigned long)u + PAGE_SIZE);
	b = (struct drm_rbln_submit_batch){
		.submits = (u64)(uintptr_t)first, .count = 2, .submit_size = sizeof(e[0]),
	};
	KUNIT_EXPECT_EQ(test, rbln_test_ioctl(test, f->file, DRM_IOCTL_RBLN_SUBMIT_BATCH, &b), 0);
	KUNIT_EXPECT_EQ(test, b.submitted, 1U);
	KUNIT_EXPECT_EQ(test, b.error, -EFAULT);
	KUNIT_ASSERT_EQ(test, copy_from_user(&e[0], first, sizeof(e[0])), 0);
	KUNIT_EXPECT_EQ(test, e[0].seqno, 1ULL);
	KUNIT_EXPECT_EQ(test, e[0].ended, 1U);
}

/*
 * Bytes set beyond the struct the driver knows, or REPORT_END with no room
 * for the report: in the first element the call fails, in a later one the
 * batch stops there.
 */
static void rbln_batch_rejects_bad_elements(struct kunit *test)
{
	struct fixture *f = test->priv;
	const u32 stride = sizeof(struct drm_rbln_submit) + 8;
	struct drm_rbln_submit e[3];
	struct drm_rbln_submit_batch b;
	char __user *u;
	u8 junk = 1;

	fill_source(test, SZ_4K);
	chain(test, e, SZ_4K);
	KUNIT_EXPECT_EQ(test, batch(test, e, 3, stride, 0xff, &b), -EINVAL);
	KUNIT_EXPECT_EQ(test, b.submitted, 0U);
	chain(test, e, SZ_4K);
	KUNIT_EXPECT_EQ(test, batch(test, e, 3, offsetof(struct drm_rbln_submit, ended), 0, &b),
			-EINVAL);
	KUNIT_EXPECT_EQ(test, b.submitted, 0U);
	KUNIT_EXPECT_EQ(test, rbln_test_client(f->file)->last_seqno, 0ULL);

	chain(test, e, SZ_4K);
	u = layout(test, e, 3, stride, 0);
	KUNIT_ASSERT_EQ(test, copy_to_user(u + 2 * stride - 1, &junk, 1), 0);
	KUNIT_EXPECT_EQ(test, run(test, u, e, 3, stride, &b), 0);
	KUNIT_EXPECT_EQ(test, b.submitted, 1U);
	KUNIT_EXPECT_EQ(test, b.error, -EINVAL);
	KUNIT_EXPECT_EQ(test, e[0].seqno, 1ULL);
	KUNIT_EXPECT_EQ(test, rbln_test_client(f->file)->last_seqno, 1ULL);
}

/* Small jobs: each runs inside the call in turn, its input done already. */
static void rbln_batch_small_chain_ends_inside(struct kunit *test)
{
	struct drm_rbln_submit e[3];
	struct drm_rbln_submit_batch b;
	u32 i;

	fill_source(test, SZ_4K);
	chain(test, e, SZ_4K);
	KUNIT_ASSERT_EQ(test, batch(test, e, 3, sizeof(e[0]), 0, &b), 0);
	KUNIT_EXPECT_EQ(test, b.submitted, 3U);
	for (i = 0; i < 3; i++) {
		KUNIT_EXPECT_EQ(test, e[i].seqno, (u64)i + 1);
		KUNIT_EXPECT_EQ(test, e[i].ended, 1U);
		KUNIT_EXPECT_EQ(test, e[i].status, 0);
	}
	KUNIT_EXPECT_TRUE(test, arrived(test, SZ_4K));
}

/* Scheduled jobs (no_direct): each waits for the fence of the one before it. */
static void rbln_batch_scheduled_chain_keeps_order(struct kunit *test)
{
	struct fixture *f = test->priv;
	struct drm_rbln_submit e[3];
	struct drm_rbln_submit_batch b;
	int status, ret;

	fill_source(test, CHAIN_BYTES);
	chain(test, e, CHAIN_BYTES);
	WRITE_ONCE(rbln_test_sim(f->rdev)->no_direct, true);
	ret = batch(test, e, 3, sizeof(e[0]), 0, &b);
	WRITE_ONCE(rbln_test_sim(f->rdev)->no_direct, false);
	KUNIT_ASSERT_EQ(test, ret, 0);
	KUNIT_EXPECT_EQ(test, b.submitted, 3U);
	KUNIT_EXPECT_EQ(test, e[2].seqno, 3ULL);
	KUNIT_EXPECT_EQ(test, e[2].ended, 0U);
	KUNIT_ASSERT_EQ(test, wait(test, e[2].seqno, &status), 0);
	KUNIT_EXPECT_EQ(test, status, 0);
	KUNIT_EXPECT_TRUE(test, arrived(test, CHAIN_BYTES));
}

/*
 * A failed first job (it ends inside the call) fails the rest with its error
 * without running them: their input has ended, so they end inside the call
 * too (interface 13; they were queued before), reported there, not to WAIT.
 */
static void rbln_batch_failure_flows_down_the_chain(struct kunit *test)
{
	struct fixture *f = test->priv;
	struct drm_rbln_submit e[3];
	struct drm_rbln_submit_batch b;
	int status;
	u32 i;

	fill_source(test, SZ_4K);
	rbln_sim_fail_next_jobs(f->rdev, 1);
	chain(test, e, SZ_4K);
	KUNIT_ASSERT_EQ(test, batch(test, e, 3, sizeof(e[0]), 0, &b), 0);
	KUNIT_EXPECT_EQ(test, b.submitted, 3U);
	KUNIT_EXPECT_EQ(test, e[0].ended, 1U);
	KUNIT_EXPECT_EQ(test, e[0].status, -EIO);
	for (i = 1; i < 3; i++) {
		KUNIT_EXPECT_EQ(test, e[i].ended, 1U);
		KUNIT_EXPECT_EQ(test, e[i].status, -EIO);
		KUNIT_ASSERT_EQ(test, wait(test, e[i].seqno, &status), 0);
		KUNIT_EXPECT_EQ(test, status, 0);	/* reported once, by the call */
	}
	KUNIT_EXPECT_FALSE(test, arrived(test, SZ_4K));
}

/*
 * A refused element stops the batch: those before it went in (the call
 * succeeds, the error is in .error), it and those after it did not.
 */
static void rbln_batch_stops_at_a_refused_element(struct kunit *test)
{
	struct fixture *f = test->priv;
	struct drm_rbln_submit e[3];
	struct drm_rbln_submit_batch b;
	u8 *n_dst = rbln_test_lookup(test, f->file, f->n_dst)->vaddr;
	u8 *gather = rbln_test_lookup(test, f->file, f->gather)->vaddr;
	u8 *src = rbln_test_lookup(test, f->file, f->n_src)->vaddr;

	fill_source(test, SZ_4K);
	chain(test, e, SZ_4K);
	e[1].engine = DRM_RBLN_ENGINE_COUNT;
	e[1].seqno = 55;
	/* Would leave its mark in gather if it ran. */
	e[2] = element(test, TASK, 0, f->n_src, f->gather, SZ_4K, 0, 0);
	e[2].seqno = 77;
	KUNIT_EXPECT_EQ(test, batch(test, e, 3, sizeof(e[0]), 0, &b), 0);
	KUNIT_EXPECT_EQ(test, b.submitted, 1U);
	KUNIT_EXPECT_EQ(test, b.error, -EINVAL);
	KUNIT_EXPECT_EQ(test, e[0].seqno, 1ULL);
	KUNIT_EXPECT_EQ(test, e[0].ended, 1U);
	KUNIT_EXPECT_EQ(test, memcmp(n_dst, src, SZ_4K), 0);
	KUNIT_EXPECT_EQ(test, e[1].seqno, 0ULL);		/* the one that stopped it */
	KUNIT_EXPECT_EQ(test, e[2].seqno, 77ULL);		/* left as it was */
	KUNIT_EXPECT_NULL(test, memchr_inv(gather, 0, SZ_4K));
	KUNIT_EXPECT_EQ(test, rbln_test_client(f->file)->last_seqno, 1ULL);

	/* Refused at the first element: the call fails with its error. */
	e[0].engine = DRM_RBLN_ENGINE_COUNT;
	KUNIT_EXPECT_EQ(test, batch(test, e, 3, sizeof(e[0]), 0, &b), -EINVAL);
	KUNIT_EXPECT_EQ(test, b.submitted, 0U);
	KUNIT_EXPECT_EQ(test, b.error, 0);
	KUNIT_EXPECT_NULL(test, memchr_inv(gather, 0, SZ_4K));

	/* A chiplet down halfway: its job is refused with -ENODEV. */
	rbln_sim_set_chiplet_down(f->rdev, 0, true);
	chain(test, e, SZ_4K);
	KUNIT_EXPECT_EQ(test, batch(test, e, 3, sizeof(e[0]), 0, &b), 0);
	rbln_sim_set_chiplet_down(f->rdev, 0, false);
	KUNIT_EXPECT_EQ(test, b.submitted, 1U);
	KUNIT_EXPECT_EQ(test, b.error, -ENODEV);
	KUNIT_EXPECT_EQ(test, e[0].seqno, 2ULL);
}

/* Room for every job of the batch is checked first: nothing goes in without it. */
static void rbln_batch_needs_room_for_all(struct kunit *test)
{
	struct fixture *f = test->priv;
	struct drm_rbln_submit e[3];
	struct drm_rbln_submit_batch b;
	u32 i;

	/* Failed jobs nobody waited for yet count, as unfinished ones do. */
	rbln_sim_fail_next_jobs(f->rdev, DRM_RBLN_MAX_INFLIGHT - 2);
	for (i = 0; i < DRM_RBLN_MAX_INFLIGHT - 2; i++) {
		e[0] = element(test, NEURAL, 1, f->n_src, f->n_dst, SZ_4K, 0, 0);
		e[0].flags = 0;
		KUNIT_ASSERT_EQ(test, batch(test, e, 1, sizeof(e[0]), 0, &b), 0);
	}
	chain(test, e, SZ_4K);
	KUNIT_EXPECT_EQ(test, batch(test, e, 3, sizeof(e[0]), 0, &b), -ENOSPC);
	KUNIT_EXPECT_EQ(test, b.submitted, 0U);
	KUNIT_EXPECT_EQ(test, rbln_test_client(f->file)->last_seqno, (u64)DRM_RBLN_MAX_INFLIGHT - 2);
	chain(test, e, SZ_4K);
	KUNIT_EXPECT_EQ(test, batch(test, e, 2, sizeof(e[0]), 0, &b), 0);
	KUNIT_EXPECT_EQ(test, b.submitted, 2U);
	KUNIT_EXPECT_EQ(test, b.error, 0);
}

/*
 * Elements of the first SUBMIT's size, larger ones with zeros beyond, the
 * largest batch and element; out fields are written whatever they held.
 */
static void rbln_batch_element_sizes(struct kunit *test)
{
	struct fixture *f = test->priv;
	struct drm_rbln_submit *e = kunit_kcalloc(test, DRM_RBLN_MAX_BATCH, sizeof(*e), GFP_KERNEL);
	struct drm_rbln_submit_batch b;
	int status;
	u32 i;

	KUNIT_ASSERT_NOT_NULL(test, e);
	fill_source(test, SZ_4K);
	for (i = 0; i < 2; i++) {
		e[i] = element(test, NEURAL, 1, f->n_src, f->n_dst, SZ_4K, 0, 0);
		e[i].flags = 0;
	}
	KUNIT_ASSERT_EQ(test, batch(test, e, 2, offsetof(struct drm_rbln_submit, in_syncs), 0, &b),
			0);
	KUNIT_EXPECT_EQ(test, b.submitted, 2U);
	KUNIT_EXPECT_EQ(test, e[1].seqno, 2ULL);
	KUNIT_ASSERT_EQ(test, wait(test, e[1].seqno, &status), 0);
	KUNIT_EXPECT_EQ(test, status, 0);

	chain(test, e, SZ_4K);		/* its first two jobs */
	e[1].flags = 0;
	e[1].ended = 7;
	e[1].status = 9;
	KUNIT_ASSERT_EQ(test, batch(test, e, 2, SZ_4K, 0, &b), 0);
	KUNIT_EXPECT_EQ(test, b.submitted, 2U);
	KUNIT_EXPECT_EQ(test, e[0].ended, 1U);
	KUNIT_EXPECT_EQ(test, e[1].seqno, 4ULL);
	KUNIT_EXPECT_EQ(test, e[1].ended, 0U);		/* not asked for */
	KUNIT_EXPECT_EQ(test, e[1].status, 0);

	for (i = 0; i < DRM_RBLN_MAX_BATCH; i++)
		e[i] = element(test, NEURAL, 1, f->n_src, f->n_dst, SZ_4K, 0, 0);
	KUNIT_ASSERT_EQ(test, batch(test, e, DRM_RBLN_MAX_BATCH, sizeof(*e), 0, &b), 0);
	KUNIT_EXPECT_EQ(test, b.submitted, (u32)DRM_RBLN_MAX_BATCH);
	KUNIT_EXPECT_EQ(test, e[DRM_RBLN_MAX_BATCH - 1].seqno, 4ULL + DRM_RBLN_MAX_BATCH);
	KUNIT_EXPECT_EQ(test, e[DRM_RBLN_MAX_BATCH - 1].ended, 1U);
}

/* The records waiting in the file's JOB_TIMES ring (taken out). */
static u32 ring_records(struct kunit *test)
{
	struct fixture *f = test->priv;
	struct drm_rbln_job_times args = {
		.entries = (u64)(uintptr_t)rbln_test_user(test, 8 * sizeof(struct drm_rbln_job_time)),
		.count = 8, .entry_size = sizeof(struct drm_rbln_job_time),
	};

	KUNIT_ASSERT_EQ(test, rbln_test_ioctl(test, f->file, DRM_IOCTL_RBLN_JOB_TIMES, &args), 0);
	return args.count;
}

/*
 * REPORT_TIMES: elements that reach .reserved3 get their times back, and the
 * ring has no record of them; a shorter element with the flag is refused,
 * and one without it gets the time fields it has room for (zeros).
 */
static void rbln_batch_reports_times_where_elements_reach_them(struct kunit *test)
{
	const u32 report = DRM_RBLN_SUBMIT_REPORT_END | DRM_RBLN_SUBMIT_TIMES |
			   DRM_RBLN_SUBMIT_REPORT_TIMES;
	const u32 short_stride = offsetof(struct drm_rbln_submit, time_flags);
	struct fixture *f = test->priv;
	struct drm_rbln_submit e[3];
	struct drm_rbln_submit_batch b;
	u32 i;

	BUILD_BUG_ON(offsetof(struct drm_rbln_submit, time_flags) % 8);
	fill_source(test, SZ_4K);
	chain(test, e, SZ_4K);
	for (i = 0; i < 3; i++) {
		e[i].flags = report;
		e[i].submit_ns = e[i].start_ns = e[i].end_ns = ~0ULL;
		e[i].time_flags = ~0U;
	}
	KUNIT_ASSERT_EQ(test, batch(test, e, 3, sizeof(e[0]), 0, &b), 0);
	KUNIT_EXPECT_EQ(test, b.submitted, 3U);
	for (i = 0; i < 3; i++) {
		KUNIT_EXPECT_EQ(test, e[i].ended, 1U);
		KUNIT_EXPECT_EQ(test, e[i].time_flags, (u32)DRM_RBLN_JOB_TIME_RAN);
		KUNIT_EXPECT_LE(test, e[i].submit_ns, e[i].start_ns);
		KUNIT_EXPECT_LT(test, e[i].start_ns, e[i].end_ns);
		if (i)
			KUNIT_EXPECT_LE(test, e[i - 1].end_ns, e[i].start_ns);
	}
	KUNIT_EXPECT_TRUE(test, arrived(test, SZ_4K));
	KUNIT_EXPECT_EQ(test, ring_records(test), 0U);

	chain(test, e, SZ_4K);
	e[0].flags = report;
	KUNIT_EXPECT_EQ(test, batch(test, e, 3, short_stride, 0, &b), -EINVAL);
	KUNIT_EXPECT_EQ(test, rbln_test_client(f->file)->last_seqno, 3ULL);

	chain(test, e, SZ_4K);
	for (i = 0; i < 3; i++) {
		e[i].flags = DRM_RBLN_SUBMIT_REPORT_END | DRM_RBLN_SUBMIT_TIMES;
		e[i].submit_ns = e[i].start_ns = e[i].end_ns = 0x5a5a5a5aULL;
	}
	KUNIT_ASSERT_EQ(test, batch(test, e, 3, short_stride, 0, &b), 0);
	KUNIT_EXPECT_EQ(test, b.submitted, 3U);
	for (i = 0; i < 3; i++) {
		KUNIT_EXPECT_EQ(test, e[i].ended, 1U);
		KUNIT_EXPECT_EQ(test, e[i].submit_ns, 0ULL);
		KUNIT_EXPECT_EQ(test, e[i].end_ns, 0ULL);
	}
	KUNIT_EXPECT_EQ(test, ring_records(test), 3U);
}

static struct kunit_case rbln_batch_cases[] = {
	KUNIT_CASE(rbln_batch_rejects_bad_arguments),
	KUNIT_CASE(rbln_batch_rejects_bad_elements),
	KUNIT_CASE(rbln_batch_small_chain_ends_inside),
	KUNIT_CASE(rbln_batch_scheduled_chain_keeps_order),
	KUNIT_CASE(rbln_batch_failure_flows_down_the_chain),
	KUNIT_CASE(rbln_batch_stops_at_a_refused_element),
	KUNIT_CASE(rbln_batch_stops_at_an_unmapped_element),
	KUNIT_CASE(rbln_batch_needs_room_for_all),
	KUNIT_CASE(rbln_batch_element_sizes),
	KUNIT_CASE(rbln_batch_reports_times_where_elements_reach_them),
	{}
};

static struct kunit_suite rbln_batch_suite = {
	.name = "rbln_batch",
	.init = rbln_batch_init,
	.test_cases = rbln_batch_cases,
};

kunit_test_suite(rbln_batch_suite);
