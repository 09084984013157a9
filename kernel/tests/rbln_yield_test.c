// SPDX-License-Identifier: GPL-2.0-only
/*
 * A job run inside SUBMIT yields its engine: once its slice has run out
 * (the test point stands for that) while another file's job waits for the
 * engine (engine->waiting stands for that), it stops between chunks, and the
 * scheduler runs the rest of it from where it stopped.  Copy 0 reads what
 * copy 1 writes, so a job that redid copy 0 after a yield inside copy 1
 * would read copy 1's bytes; every word names its buffer and page, so a
 * rest resumed at the wrong place shows too.  With the CPU's addresses and with
 * DMA addresses (the simulator's sim_dma mode).
 */
#include <kunit/test.h>
#include <linux/sizes.h>
#include <linux/string.h>

#include "../rbln_device.h"
#include "rbln_kunit_sim.h"

#define TASK	DRM_RBLN_ENGINE_TASK_DMA
#define SIDE	SZ_2M	/* two chunks of the simulator's */

/* The test point's state: how often it was passed, and when the other job comes. */
static struct {
	atomic_t calls;
	int waiter_at;			/* the call that brings the waiter (0: none) */
	struct rbln_engine *engine;
} rbln_yield;

static int rbln_yield_slice_over(enum rbln_test_point_id point)
{
	if (point != RBLN_TP_DIRECT_SLICE)
		return 0;
	if (atomic_inc_return(&rbln_yield.calls) == rbln_yield.waiter_at)
		atomic_inc(&rbln_yield.engine->waiting);
	return 1;
}

struct yield_fixture {
	struct file *file;
	u32 a, b, c;
	struct rbln_bo *ba, *bb, *bc;
	u8 *old_b;
};

/* Every word says its buffer and page: a rest resumed a chunk off shows. */
static void fill(struct rbln_bo *bo, u32 seed)
{
	u32 *w = bo->vaddr;
	u32 i;

	for (i = 0; i < SIDE / sizeof(*w); i++)
		w[i] = seed << 16 | (u32)(i * sizeof(*w) / PAGE_SIZE);
}

static void yield_setup(struct kunit *test, struct yield_fixture *f, struct rbln_device *rdev)
{
	f->file = rbln_test_open(test, rdev);
	f->a = rbln_test_bo(test, f->file, SIDE, 0, 0);
	f->b = rbln_test_bo(test, f->file, SIDE, 0, 0);
	f->c = rbln_test_bo(test, f->file, SIDE, 0, 0);
	f->ba = rbln_test_lookup(test, f->file, f->a);
	f->bb = rbln_test_lookup(test, f->file, f->b);
	f->bc = rbln_test_lookup(test, f->file, f->c);
	f->old_b = kunit_kmalloc(test, SIDE, GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, f->old_b);
	rbln_yield.engine = &rdev->chiplets[0].engines[TASK];
	atomic_set(&rbln_yield.calls, 0);
	rbln_yield.waiter_at = 0;
	rbln_test_set_point_hook(test, rbln_yield_slice_over);
}

/* B -> C, then A -> B, inside SUBMIT if it can; returns SUBMIT's arguments after it. */
static struct drm_rbln_submit yield_submit(struct kunit *test, struct yield_fixture *f)
{
	const struct drm_rbln_copy c[2] = {
		{ .src_handle = f->b, .dst_handle = f->c, .size = SIDE },
		{ .src_handle = f->a, .dst_handle = f->b, .size = SIDE },
	};
	struct drm_rbln_submit a = {
		.engine = TASK, .copy_count = 2, .copy_size = sizeof(c[0]),
		.copies = (u64)(uintptr_t)rbln_test_user_copy(test, c, sizeof(c)),
		.flags = DRM_RBLN_SUBMIT_REPORT_END,
	};
	int ret;

	fill(f->ba, 0xa);
	fill(f->bb, 0xb);
	memset(f->bc->vaddr, 0, SIDE);
	memcpy(f->old_b, f->bb->vaddr, SIDE);
	ret = rbln_test_ioctl(test, f->file, DRM_IOCTL_RBLN_SUBMIT, &a);
	if (rbln_yield.waiter_at && atomic_read(&rbln_yield.calls) >= rbln_yield.waiter_at)
		atomic_dec(&rbln_yield.engine->waiting);	/* the other job came and went */
	KUNIT_EXPECT_EQ(test, ret, 0);
	return a;
}

/* The job ended well, with C the old B and B a copy of A. */
static void expect_copied(struct kunit *test, struct yield_fixture *f, u64 seqno)
{
	struct drm_rbln_wait w = { .seqno = seqno, .timeout_ns = 30LL * NSEC_PER_SEC };

	KUNIT_ASSERT_EQ(test, rbln_test_ioctl(test, f->file, DRM_IOCTL_RBLN_WAIT, &w), 0);
	KUNIT_EXPECT_EQ(test, w.status, 0);
	KUNIT_EXPECT_EQ_MSG(test, memcmp(f->bc->vaddr, f->old_b, SIDE), 0,
			    "copy 0 redone, or resumed at the wrong place");
	KUNIT_EXPECT_EQ_MSG(test, memcmp(f->bb->vaddr, f->ba->vaddr, SIDE), 0,
			    "copy 1 resumed at the wrong place");
}

static void rbln_yield_cases(struct kunit *test, struct rbln_device *rdev)
{
	struct yield_fixture *f = kunit_kzalloc(test, sizeof(*f), GFP_KERNEL);
	struct drm_rbln_submit a;
	int chunks, at[3];
	u32 i;

	KUNIT_ASSERT_NOT_NULL(test, f);
	yield_setup(test, f, rdev);

	/* Its slice over, but nobody waits: it runs on to its end inside SUBMIT. */
	a = yield_submit(test, f);
	KUNIT_EXPECT_EQ_MSG(test, a.ended, 1U, "nobody waited for the engine");
	KUNIT_EXPECT_EQ(test, a.status, 0);
	chunks = atomic_read(&rbln_yield.calls);
	KUNIT_ASSERT_GE_MSG(test, chunks, 4, "asked at least once a chunk (1 MiB)");
	expect_copied(test, f, a.seqno);

	at[0] = chunks / 4 + 1;
	at[1] = chunks / 2 + 1;
	at[2] = 1;

	/* The other job comes half way through copy 1: the rest is scheduled. */
	atomic_set(&rbln_yield.calls, 0);
	rbln_yield.waiter_at = chunks * 3 / 4 + 1;
	a = yield_submit(test, f);
	KUNIT_EXPECT_EQ_MSG(test, a.ended, 0U, "it yielded its engine");
	KUNIT_EXPECT_EQ_MSG(test, atomic_read(&rbln_yield.calls), rbln_yield.waiter_at,
			    "the rest ran scheduled, not inside SUBMIT");
	expect_copied(test, f, a.seqno);

	/* Half way through copy 0; between the copies; at once, before any byte. */
	for (i = 0; i < ARRAY_SIZE(at); i++) {
		atomic_set(&rbln_yield.calls, 0);
		rbln_yield.waiter_at = at[i];
		a = yield_submit(test, f);
		KUNIT_EXPECT_EQ_MSG(test, a.ended, 0U, "waiter at chunk %d", at[i]);
		KUNIT_EXPECT_EQ(test, atomic_read(&rbln_yield.calls), at[i]);
		expect_copied(test, f, a.seqno);
	}
}

static void rbln_yield_cpu_copy(struct kunit *test)
{
	rbln_yield_cases(test, rbln_test_device(test, "atom 16"));
}

static void rbln_yield_dma_mode_off(void *unused)
{
	WRITE_ONCE(rbln_sim_dma, false);
}

static void rbln_yield_dma_copy(struct kunit *test)
{
	struct rbln_device *rdev;

	/* Off again even if the device cannot be made. */
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, rbln_yield_dma_mode_off, NULL), 0);
	WRITE_ONCE(rbln_sim_dma, true);
	rdev = rbln_test_device(test, "atom 16");
	WRITE_ONCE(rbln_sim_dma, false);
	KUNIT_ASSERT_NOT_NULL(test, rdev->info.dma_dev);
	rbln_yield_cases(test, rdev);
}

static struct kunit_case rbln_yield_test_cases[] = {
	KUNIT_CASE(rbln_yield_cpu_copy),
	KUNIT_CASE(rbln_yield_dma_copy),
	{}
};

static struct kunit_suite rbln_yield_suite = {
	.name = "rbln_yield",
	.test_cases = rbln_yield_test_cases,
};
kunit_test_suite(rbln_yield_suite);
