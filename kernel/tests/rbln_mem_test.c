// SPDX-License-Identifier: GPL-2.0-only
/*
 * Device memory (rbln_mem.c) on simulated devices: capacity and shares come
 * from the buddy allocators, addresses stay in their windows and never
 * overlap, and fragmentation fails a request only when no range fits.
 */
#include <kunit/test.h>
#include <linux/sizes.h>

#include "../rbln_device.h"
#include "../rbln_gem.h"
#include "rbln_kunit_sim.h"

#define WINDOW(w)	((u64)(w) << 40)
#define INTERLEAVED	DRM_RBLN_CHIPLET_INTERLEAVED

/* Buffers' device memory, given back when the test ends if still held. */
struct test_bufs {
	struct rbln_device *rdev;
	unsigned int count;
	struct rbln_mem *mem;
	u64 *size;
	u32 *chiplet;
	bool *live;
};

static void test_bufs_release(void *data)
{
	struct test_bufs *b = data;
	unsigned int i;

	for (i = 0; i < b->count; i++)
		if (b->live[i])
			rbln_mem_free(b->rdev, &b->mem[i]);
}

static struct test_bufs *test_bufs(struct kunit *test, struct rbln_device *rdev,
				   unsigned int count)
{
	struct test_bufs *b = kunit_kzalloc(test, sizeof(*b), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, b);
	b->rdev = rdev;
	b->count = count;
	b->mem = kunit_kcalloc(test, count, sizeof(*b->mem), GFP_KERNEL);
	b->size = kunit_kcalloc(test, count, sizeof(*b->size), GFP_KERNEL);
	b->chiplet = kunit_kcalloc(test, count, sizeof(*b->chiplet), GFP_KERNEL);
	b->live = kunit_kcalloc(test, count, sizeof(*b->live), GFP_KERNEL);
	KUNIT_ASSERT_TRUE(test, b->mem && b->size && b->chiplet && b->live);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, test_bufs_release, b), 0);
	return b;
}

static int take(struct test_bufs *b, unsigned int i, u32 chiplet, u64 size)
{
	int ret = rbln_mem_alloc(b->rdev, chiplet, size, &b->mem[i]);

	if (!ret) {
		b->live[i] = true;
		b->size[i] = size;
		b->chiplet[i] = chiplet;
	}
	return ret;
}

static void give(struct test_bufs *b, unsigned int i)
{
	if (b->live[i])
		rbln_mem_free(b->rdev, &b->mem[i]);
	b->live[i] = false;
}

static u64 addr(const struct test_bufs *b, unsigned int i)
{
	return b->mem[i].address;
}

static u64 used(struct rbln_device *rdev, unsigned int i)
{
	return atomic64_read(&rdev->chiplets[i].memory_used);
}

static u64 placed(struct rbln_device *rdev, unsigned int i)
{
	return atomic64_read(&rdev->chiplets[i].memory_placed);
}

/* Free in window @w: the allocator's, and its guard page if held (it is lent). */
static u64 window_free(struct rbln_device *rdev, unsigned int w)
{
	return rdev->mem_windows[w].avail + (list_empty(&rdev->mem_guards[w]) ? 0 : PAGE_SIZE);
}

static bool guard_held(struct rbln_device *rdev, unsigned int w)
{
	return !list_empty(&rdev->mem_guards[w]);
}

static bool inside(const struct test_bufs *b, unsigned int i, unsigned int window, u64 len)
{
	return addr(b, i) >= WINDOW(window) && addr(b, i) + b->size[i] <= WINDOW(window) + len;
}

static void rbln_mem_capacity_is_the_allocators(struct kunit *test)
{
	struct rbln_device *rdev = rbln_test_device(test, "atom 1");	/* one chiplet, 1 MiB */
	struct test_bufs *b = test_bufs(test, rdev, 3);

	KUNIT_EXPECT_EQ(test, take(b, 0, 0, SZ_512K), 0);
	KUNIT_EXPECT_EQ(test, take(b, 1, 0, SZ_512K), 0);
	KUNIT_EXPECT_EQ(test, used(rdev, 0), (u64)SZ_1M);
	/* Full: one more page fails and changes nothing. */
	KUNIT_EXPECT_EQ(test, take(b, 2, 0, PAGE_SIZE), -ENOSPC);
	KUNIT_EXPECT_EQ(test, used(rdev, 0), (u64)SZ_1M);
	give(b, 0);
	KUNIT_EXPECT_EQ(test, used(rdev, 0), (u64)SZ_512K);
	KUNIT_EXPECT_EQ(test, take(b, 2, 0, SZ_512K), 0);
}

static void rbln_mem_larger_than_device(struct kunit *test)
{
	struct rbln_device *rdev = rbln_test_device(test, "rebel100 4");	/* 1 MiB each */
	struct test_bufs *b = test_bufs(test, rdev, 1);

	KUNIT_EXPECT_EQ(test, take(b, 0, 2, SZ_1M + PAGE_SIZE), -ENOSPC);
	KUNIT_EXPECT_EQ(test, take(b, 0, INTERLEAVED, 4 * SZ_1M + 4 * PAGE_SIZE), -ENOSPC);
	KUNIT_EXPECT_EQ(test, take(b, 0, 2, U64_MAX & PAGE_MASK), -ENOSPC);
	KUNIT_EXPECT_EQ(test, take(b, 0, INTERLEAVED, U64_MAX & PAGE_MASK), -ENOSPC);
	KUNIT_EXPECT_EQ(test, used(rdev, 0) + used(rdev, 1) + used(rdev, 2) + used(rdev, 3), 0ULL);
}

static void rbln_mem_placement_only_on_its_chiplet(struct kunit *test)
{
	struct rbln_device *rdev = rbln_test_device(test, "rebel100 4");
	struct test_bufs *b = test_bufs(test, rdev, 2);

	KUNIT_EXPECT_EQ(test, take(b, 0, 3, SZ_256K), 0);
	KUNIT_EXPECT_EQ(test, used(rdev, 0), 0ULL);
	KUNIT_EXPECT_EQ(test, used(rdev, 1), 0ULL);
	KUNIT_EXPECT_EQ(test, used(rdev, 2), 0ULL);
	KUNIT_EXPECT_EQ(test, used(rdev, 3), (u64)SZ_256K);
	/* Chiplet 3 full does not stop the others. */
	KUNIT_EXPECT_EQ(test, take(b, 1, 3, SZ_1M), -ENOSPC);
	KUNIT_EXPECT_EQ(test, take(b, 1, 1, SZ_1M), 0);
}

/* Interleaving is page by page; pages that do not divide evenly go to chiplet 0. */
static void rbln_mem_interleave_split(struct kunit *test)
{
	struct rbln_device *rdev = rbln_test_device(test, "rebel100 4");
	struct test_bufs *b = test_bufs(test, rdev, 1);

	KUNIT_ASSERT_EQ(test, take(b, 0, INTERLEAVED, 7 * PAGE_SIZE), 0);
	KUNIT_EXPECT_EQ(test, used(rdev, 0), 4 * PAGE_SIZE);
	KUNIT_EXPECT_EQ(test, used(rdev, 1), PAGE_SIZE);
	KUNIT_EXPECT_EQ(test, used(rdev, 2), PAGE_SIZE);
	KUNIT_EXPECT_EQ(test, used(rdev, 3), PAGE_SIZE);
	KUNIT_EXPECT_TRUE(test, inside(b, 0, RBLN_MAX_CHIPLETS, SZ_4M));
	give(b, 0);
	KUNIT_EXPECT_EQ(test, used(rdev, 0) + used(rdev, 1) + used(rdev, 2) + used(rdev, 3), 0ULL);
}

/* All or nothing: one full chiplet fails an interleaved buffer everywhere. */
static void rbln_mem_interleave_all_or_nothing(struct kunit *test)
{
	struct rbln_device *rdev = rbln_test_device(test, "rebel100 4");
	struct test_bufs *b = test_bufs(test, rdev, 2);

	KUNIT_ASSERT_EQ(test, take(b, 0, 2, SZ_1M), 0);
	KUNIT_EXPECT_EQ(test, take(b, 1, INTERLEAVED, 4 * PAGE_SIZE), -ENOSPC);
	KUNIT_EXPECT_EQ(test, used(rdev, 0), 0ULL);
	KUNIT_EXPECT_EQ(test, used(rdev, 1), 0ULL);
	KUNIT_EXPECT_EQ(test, used(rdev, 3), 0ULL);
	KUNIT_EXPECT_EQ(test, window_free(rdev, RBLN_MAX_CHIPLETS), (u64)SZ_4M);
	/* Less than a page per chiplet lands on chiplet 0 alone, so it fits. */
	KUNIT_EXPECT_EQ(test, take(b, 1, INTERLEAVED, 3 * PAGE_SIZE), 0);
	KUNIT_EXPECT_EQ(test, used(rdev, 0), 3 * PAGE_SIZE);
}

static void rbln_mem_single_chiplet_interleave_is_whole(struct kunit *test)
{
	struct rbln_device *rdev = rbln_test_device(test, "atom 1");
	struct test_bufs *b = test_bufs(test, rdev, 1);

	KUNIT_EXPECT_EQ(test, take(b, 0, INTERLEAVED, SZ_1M), 0);
	KUNIT_EXPECT_EQ(test, used(rdev, 0), (u64)SZ_1M);
}

static void rbln_mem_placed_follows_shares(struct kunit *test)
{
	struct rbln_device *rdev = rbln_test_device(test, "rebel100 4");

	rbln_mem_placed(rdev, INTERLEAVED, 6 * PAGE_SIZE);
	KUNIT_EXPECT_EQ(test, placed(rdev, 0), 3 * PAGE_SIZE);
	KUNIT_EXPECT_EQ(test, placed(rdev, 1), PAGE_SIZE);
	KUNIT_EXPECT_EQ(test, placed(rdev, 3), PAGE_SIZE);
	rbln_mem_placed(rdev, 1, 2 * PAGE_SIZE);
	KUNIT_EXPECT_EQ(test, placed(rdev, 1), 3 * PAGE_SIZE);
	rbln_mem_placed(rdev, INTERLEAVED, -(s64)(6 * PAGE_SIZE));
	rbln_mem_placed(rdev, 1, -(s64)(2 * PAGE_SIZE));
	KUNIT_EXPECT_EQ(test, placed(rdev, 0) + placed(rdev, 1) + placed(rdev, 2) + placed(rdev, 3),
			0ULL);
	/* Placement is not allocation. */
	KUNIT_EXPECT_EQ(test, used(rdev, 0), 0ULL);
}

/*
 * Addresses fill their chiplet's window (chiplet memory long) without
 * overlapping; freed ranges are reused, and a request fails with -ENOSPC only
 * when no free range is large enough.
 */
static void rbln_mem_addresses_stay_in_their_window(struct kunit *test)
{
	struct rbln_device *rdev = rbln_test_device(test, "rebel100 4");
	const unsigned int n = SZ_1M / PAGE_SIZE;
	struct test_bufs *b = test_bufs(test, rdev, n + 3);
	const unsigned int big = n, il = n + 1, more = n + 2;
	unsigned int i, j;

	for (i = 0; i < n; i++) {
		KUNIT_ASSERT_EQ(test, take(b, i, 2, PAGE_SIZE), 0);
		KUNIT_EXPECT_TRUE(test, inside(b, i, 2, SZ_1M));
		for (j = 0; j < i; j++)
			KUNIT_EXPECT_NE(test, addr(b, i), addr(b, j));
	}
	KUNIT_EXPECT_EQ(test, take(b, more, 2, PAGE_SIZE), -ENOSPC);
	/* Every other page free: half the window, but no two pages in a row. */
	for (i = 0; i < n; i++)
		if ((addr(b, i) - WINDOW(2)) / PAGE_SIZE % 2 == 0)
			give(b, i);
	KUNIT_EXPECT_EQ(test, used(rdev, 2), (u64)SZ_512K);
	KUNIT_EXPECT_EQ(test, take(b, more, 2, 2 * PAGE_SIZE), -ENOSPC);
	KUNIT_EXPECT_EQ(test, take(b, more, 2, PAGE_SIZE), 0);
	KUNIT_EXPECT_TRUE(test, inside(b, more, 2, SZ_1M));
	/* Interleaved buffers and other chiplets have windows of their own. */
	KUNIT_ASSERT_EQ(test, take(b, il, INTERLEAVED, SZ_1M), 0);	/* 256 KiB each */
	KUNIT_EXPECT_TRUE(test, inside(b, il, RBLN_MAX_CHIPLETS, SZ_4M));
	KUNIT_ASSERT_EQ(test, take(b, big, 3, SZ_512K), 0);
	KUNIT_EXPECT_TRUE(test, inside(b, big, 3, SZ_1M));
}

/* A fixed sequence, so that a failure is reproducible. */
static u32 next_random(u64 *state)
{
	*state = *state * 6364136223846793005ULL + 1442695040888963407ULL;
	return *state >> 33;
}

/*
 * Random allocations and frees on one chiplet and interleaved: every live
 * buffer stays in its window without overlapping another, and each chiplet's
 * used memory is exactly the live buffers' (shares of) sizes.
 */
static void rbln_mem_addresses_never_overlap(struct kunit *test)
{
	struct rbln_device *rdev = rbln_test_device(test, "rebel100 4");
	const unsigned int slots = 48, rounds = 3000;
	struct test_bufs *b = test_bufs(test, rdev, slots);
	unsigned int round, i, j, c, failures = 0;
	u64 state = 13;

	for (round = 0; round < rounds; round++) {
		u64 expect[RBLN_MAX_CHIPLETS] = {};

		i = next_random(&state) % slots;
		if (b->live[i]) {
			give(b, i);
		} else {
			u32 chiplet = next_random(&state) % 3 ? 1 : INTERLEAVED;
			u64 size = (1 + next_random(&state) % 48) * PAGE_SIZE;
			int ret = take(b, i, chiplet, size);

			KUNIT_ASSERT_TRUE(test, ret == 0 || ret == -ENOSPC);
			failures += ret != 0;
		}
		for (i = 0; i < slots; i++) {
			u64 pages = b->size[i] / PAGE_SIZE;

			if (!b->live[i])
				continue;
			if (b->chiplet[i] == INTERLEAVED) {
				KUNIT_ASSERT_TRUE(test, inside(b, i, RBLN_MAX_CHIPLETS, SZ_4M));
				for (c = 0; c < 4; c++)
					expect[c] += (pages / 4 + (c ? 0 : pages % 4)) * PAGE_SIZE;
			} else {
				KUNIT_ASSERT_TRUE(test, inside(b, i, 1, SZ_1M));
				expect[1] += b->size[i];
			}
			for (j = 0; j < i; j++)
				KUNIT_ASSERT_TRUE_MSG(test, !b->live[j] ||
						      addr(b, j) >= addr(b, i) + b->size[i] ||
						      addr(b, j) + b->size[j] <= addr(b, i),
						      "round %u: buffers %u and %u overlap", round, i, j);
		}
		for (c = 0; c < 4; c++)
			KUNIT_ASSERT_EQ_MSG(test, used(rdev, c), expect[c], "round %u chiplet %u",
					    round, c);
	}
	/* Both outcomes happened: the chiplet filled up and emptied again. */
	KUNIT_EXPECT_GT(test, failures, 0U);
	KUNIT_EXPECT_LT(test, failures, rounds / 2);
}

/*
 * Fragmentation: with every other 64 KiB range freed, half the chiplet is free
 * but 128 KiB does not fit anywhere (-ENOSPC); once two neighbours are free,
 * it does, there.
 */
static void rbln_mem_fragmentation(struct kunit *test)
{
	struct rbln_device *rdev = rbln_test_device(test, "rebel100 4");
	const unsigned int n = SZ_1M / SZ_64K;
	struct test_bufs *b = test_bufs(test, rdev, n + 2);
	unsigned int at[SZ_1M / SZ_64K];	/* the buffer at each 64 KiB of the window */
	const unsigned int large = n, small = n + 1;
	unsigned int i;

	for (i = 0; i < n; i++)
		at[i] = n;
	for (i = 0; i < n; i++) {
		KUNIT_ASSERT_EQ(test, take(b, i, 0, SZ_64K), 0);
		KUNIT_ASSERT_TRUE(test, inside(b, i, 0, SZ_1M));
		KUNIT_ASSERT_EQ(test, addr(b, i) % SZ_64K, 0ULL);
		KUNIT_ASSERT_EQ(test, at[addr(b, i) / SZ_64K], n);
		at[addr(b, i) / SZ_64K] = i;
	}
	KUNIT_EXPECT_EQ(test, take(b, small, 0, PAGE_SIZE), -ENOSPC);
	for (i = 0; i < n; i += 2)
		give(b, at[i]);
	KUNIT_EXPECT_EQ(test, used(rdev, 0), (u64)SZ_512K);
	KUNIT_EXPECT_EQ(test, take(b, large, 0, SZ_128K), -ENOSPC);
	KUNIT_EXPECT_EQ(test, used(rdev, 0), (u64)SZ_512K);
	KUNIT_EXPECT_EQ(test, take(b, small, 0, SZ_64K), 0);
	give(b, small);
	/* [0, 64K) and [128K, 192K) are free: freeing [64K, 128K) makes room. */
	give(b, at[1]);
	KUNIT_ASSERT_EQ(test, take(b, large, 0, SZ_128K), 0);
	KUNIT_EXPECT_TRUE(test, inside(b, large, 0, 3 * SZ_64K));
	KUNIT_EXPECT_EQ(test, used(rdev, 0), (u64)SZ_512K - SZ_64K + SZ_128K);
}

/*
 * The guard page (page 0 of each window, held so small buffers need not split
 * the allocator all the way down) is not counted as used, never handed out
 * while held, and lent when nothing else fits: page by page the chiplet takes
 * exactly its capacity, all inside its window, and then one buffer of it all.
 */
static void rbln_mem_guard_page(struct kunit *test)
{
	struct rbln_device *rdev = rbln_test_device(test, "atom 1");	/* one chiplet, 1 MiB */
	const unsigned int n = SZ_1M / PAGE_SIZE;
	struct test_bufs *b = test_bufs(test, rdev, n + 1);
	unsigned int i, j;

	KUNIT_EXPECT_TRUE(test, guard_held(rdev, 0));
	KUNIT_EXPECT_TRUE(test, guard_held(rdev, RBLN_MAX_CHIPLETS));
	KUNIT_EXPECT_EQ(test, used(rdev, 0), 0ULL);
	KUNIT_EXPECT_EQ(test, window_free(rdev, 0), (u64)SZ_1M);
	for (i = 0; i < n; i++) {
		KUNIT_ASSERT_EQ(test, take(b, i, 0, PAGE_SIZE), 0);
		KUNIT_ASSERT_TRUE(test, inside(b, i, 0, SZ_1M));
		if (guard_held(rdev, 0))
			KUNIT_ASSERT_NE(test, addr(b, i), WINDOW(0));
		for (j = 0; j < i; j++)
			KUNIT_ASSERT_NE(test, addr(b, j), addr(b, i));
	}
	KUNIT_EXPECT_FALSE(test, guard_held(rdev, 0));	/* lent to the last page */
	KUNIT_EXPECT_EQ(test, used(rdev, 0), (u64)SZ_1M);
	KUNIT_EXPECT_EQ(test, take(b, n, 0, PAGE_SIZE), -ENOSPC);
	for (i = 0; i < n; i++)
		give(b, i);
	KUNIT_EXPECT_TRUE(test, guard_held(rdev, 0));	/* taken back */
	KUNIT_EXPECT_EQ(test, used(rdev, 0), 0ULL);
	KUNIT_ASSERT_EQ(test, take(b, n, 0, SZ_1M), 0);
	KUNIT_EXPECT_EQ(test, addr(b, n), WINDOW(0));
	KUNIT_EXPECT_EQ(test, used(rdev, 0), (u64)SZ_1M);
	give(b, n);
	KUNIT_EXPECT_TRUE(test, guard_held(rdev, 0));
	/* Interleaved: the address window has its guard too, lent the same way. */
	KUNIT_ASSERT_EQ(test, take(b, n, INTERLEAVED, SZ_1M), 0);
	KUNIT_EXPECT_TRUE(test, inside(b, n, RBLN_MAX_CHIPLETS, SZ_1M));
	KUNIT_EXPECT_EQ(test, used(rdev, 0), (u64)SZ_1M);
	give(b, n);
	KUNIT_EXPECT_TRUE(test, guard_held(rdev, 0));
	KUNIT_EXPECT_TRUE(test, guard_held(rdev, RBLN_MAX_CHIPLETS));
	KUNIT_EXPECT_EQ(test, used(rdev, 0), 0ULL);
}

static struct kunit_case rbln_mem_cases[] = {
	KUNIT_CASE(rbln_mem_capacity_is_the_allocators),
	KUNIT_CASE(rbln_mem_larger_than_device),
	KUNIT_CASE(rbln_mem_placement_only_on_its_chiplet),
	KUNIT_CASE(rbln_mem_interleave_split),
	KUNIT_CASE(rbln_mem_interleave_all_or_nothing),
	KUNIT_CASE(rbln_mem_single_chiplet_interleave_is_whole),
	KUNIT_CASE(rbln_mem_placed_follows_shares),
	KUNIT_CASE(rbln_mem_addresses_stay_in_their_window),
	KUNIT_CASE(rbln_mem_addresses_never_overlap),
	KUNIT_CASE(rbln_mem_fragmentation),
	KUNIT_CASE(rbln_mem_guard_page),
	{}
};

static struct kunit_suite rbln_mem_suite = {
	.name = "rbln_mem",
	.test_cases = rbln_mem_cases,
};
kunit_test_suite(rbln_mem_suite);
