// SPDX-License-Identifier: GPL-2.0-only
/*
 * Capacity accounting and placement shares (rbln_mem.c), on a device in
 * memory only; device addresses on a simulated device.
 */
#include <kunit/test.h>
#include <linux/sizes.h>

#include "../rbln_device.h"
#include "../rbln_gem.h"
#include "rbln_kunit.h"

static struct rbln_device *fake_device(struct kunit *test, unsigned int chiplets, u64 per_chiplet)
{
	struct rbln_device *rdev = kunit_kzalloc(test, sizeof(*rdev), GFP_KERNEL);
	unsigned int i;

	KUNIT_ASSERT_NOT_NULL(test, rdev);
	spin_lock_init(&rdev->mem_lock);
	rdev->nr_chiplets = chiplets;
	for (i = 0; i < chiplets; i++) {
		rdev->chiplets[i].index = i;
		rdev->chiplets[i].memory_total = per_chiplet;
		atomic64_set(&rdev->chiplets[i].memory_used, 0);
		atomic64_set(&rdev->chiplets[i].memory_placed, 0);
	}
	return rdev;
}

static u64 used(struct rbln_device *rdev, unsigned int i)
{
	return atomic64_read(&rdev->chiplets[i].memory_used);
}

static u64 placed(struct rbln_device *rdev, unsigned int i)
{
	return atomic64_read(&rdev->chiplets[i].memory_placed);
}

static void rbln_mem_reserve_up_to_capacity(struct kunit *test)
{
	struct rbln_device *rdev = fake_device(test, 1, SZ_1M);

	KUNIT_EXPECT_EQ(test, rbln_mem_reserve(rdev, 0, SZ_512K), 0);
	KUNIT_EXPECT_EQ(test, rbln_mem_reserve(rdev, 0, SZ_512K), 0);
	KUNIT_EXPECT_EQ(test, used(rdev, 0), (u64)SZ_1M);
	/* Full: one more page fails and changes nothing. */
	KUNIT_EXPECT_EQ(test, rbln_mem_reserve(rdev, 0, PAGE_SIZE), -ENOSPC);
	KUNIT_EXPECT_EQ(test, used(rdev, 0), (u64)SZ_1M);
	rbln_mem_unreserve(rdev, 0, SZ_512K);
	KUNIT_EXPECT_EQ(test, used(rdev, 0), (u64)SZ_512K);
	KUNIT_EXPECT_EQ(test, rbln_mem_reserve(rdev, 0, SZ_512K), 0);
}

static void rbln_mem_reserve_larger_than_device(struct kunit *test)
{
	struct rbln_device *rdev = fake_device(test, 4, SZ_1M);

	KUNIT_EXPECT_EQ(test, rbln_mem_reserve(rdev, 2, SZ_1M + PAGE_SIZE), -ENOSPC);
	KUNIT_EXPECT_EQ(test, rbln_mem_reserve(rdev, DRM_RBLN_CHIPLET_INTERLEAVED,
					       4 * SZ_1M + 4 * PAGE_SIZE), -ENOSPC);
	KUNIT_EXPECT_EQ(test, rbln_mem_reserve(rdev, 2, U64_MAX & PAGE_MASK), -ENOSPC);
	KUNIT_EXPECT_EQ(test, used(rdev, 0) + used(rdev, 1) + used(rdev, 2) + used(rdev, 3), 0ULL);
}

static void rbln_mem_placement_only_on_its_chiplet(struct kunit *test)
{
	struct rbln_device *rdev = fake_device(test, 4, SZ_1M);

	KUNIT_EXPECT_EQ(test, rbln_mem_reserve(rdev, 3, SZ_256K), 0);
	KUNIT_EXPECT_EQ(test, used(rdev, 0), 0ULL);
	KUNIT_EXPECT_EQ(test, used(rdev, 1), 0ULL);
	KUNIT_EXPECT_EQ(test, used(rdev, 2), 0ULL);
	KUNIT_EXPECT_EQ(test, used(rdev, 3), (u64)SZ_256K);
	/* Chiplet 3 full does not stop the others. */
	KUNIT_EXPECT_EQ(test, rbln_mem_reserve(rdev, 3, SZ_1M), -ENOSPC);
	KUNIT_EXPECT_EQ(test, rbln_mem_reserve(rdev, 1, SZ_1M), 0);
}

/* Interleaving is page by page; pages that do not divide evenly go to chiplet 0. */
static void rbln_mem_interleave_split(struct kunit *test)
{
	struct rbln_device *rdev = fake_device(test, 4, SZ_1M);

	KUNIT_EXPECT_EQ(test, rbln_mem_reserve(rdev, DRM_RBLN_CHIPLET_INTERLEAVED, 7 * PAGE_SIZE), 0);
	KUNIT_EXPECT_EQ(test, used(rdev, 0), 4 * PAGE_SIZE);
	KUNIT_EXPECT_EQ(test, used(rdev, 1), PAGE_SIZE);
	KUNIT_EXPECT_EQ(test, used(rdev, 2), PAGE_SIZE);
	KUNIT_EXPECT_EQ(test, used(rdev, 3), PAGE_SIZE);
	rbln_mem_unreserve(rdev, DRM_RBLN_CHIPLET_INTERLEAVED, 7 * PAGE_SIZE);
	KUNIT_EXPECT_EQ(test, used(rdev, 0) + used(rdev, 1) + used(rdev, 2) + used(rdev, 3), 0ULL);
}

/* All or nothing: one full chiplet fails an interleaved buffer everywhere. */
static void rbln_mem_interleave_all_or_nothing(struct kunit *test)
{
	struct rbln_device *rdev = fake_device(test, 4, SZ_1M);

	KUNIT_ASSERT_EQ(test, rbln_mem_reserve(rdev, 2, SZ_1M), 0);
	KUNIT_EXPECT_EQ(test, rbln_mem_reserve(rdev, DRM_RBLN_CHIPLET_INTERLEAVED, 4 * PAGE_SIZE),
			-ENOSPC);
	KUNIT_EXPECT_EQ(test, used(rdev, 0), 0ULL);
	KUNIT_EXPECT_EQ(test, used(rdev, 1), 0ULL);
	KUNIT_EXPECT_EQ(test, used(rdev, 3), 0ULL);
	/* Less than a page per chiplet lands on chiplet 0 alone, so it fits. */
	KUNIT_EXPECT_EQ(test, rbln_mem_reserve(rdev, DRM_RBLN_CHIPLET_INTERLEAVED, 3 * PAGE_SIZE), 0);
	KUNIT_EXPECT_EQ(test, used(rdev, 0), 3 * PAGE_SIZE);
}

static void rbln_mem_single_chiplet_interleave_is_whole(struct kunit *test)
{
	struct rbln_device *rdev = fake_device(test, 1, SZ_1M);

	KUNIT_EXPECT_EQ(test, rbln_mem_reserve(rdev, DRM_RBLN_CHIPLET_INTERLEAVED, SZ_1M), 0);
	KUNIT_EXPECT_EQ(test, used(rdev, 0), (u64)SZ_1M);
}

static void rbln_mem_placed_follows_shares(struct kunit *test)
{
	struct rbln_device *rdev = fake_device(test, 4, SZ_1M);

	rbln_mem_placed(rdev, DRM_RBLN_CHIPLET_INTERLEAVED, 6 * PAGE_SIZE);
	KUNIT_EXPECT_EQ(test, placed(rdev, 0), 3 * PAGE_SIZE);
	KUNIT_EXPECT_EQ(test, placed(rdev, 1), PAGE_SIZE);
	KUNIT_EXPECT_EQ(test, placed(rdev, 3), PAGE_SIZE);
	rbln_mem_placed(rdev, 1, 2 * PAGE_SIZE);
	KUNIT_EXPECT_EQ(test, placed(rdev, 1), 3 * PAGE_SIZE);
	rbln_mem_placed(rdev, DRM_RBLN_CHIPLET_INTERLEAVED, -(s64)(6 * PAGE_SIZE));
	rbln_mem_placed(rdev, 1, -(s64)(2 * PAGE_SIZE));
	KUNIT_EXPECT_EQ(test, placed(rdev, 0) + placed(rdev, 1) + placed(rdev, 2) + placed(rdev, 3),
			0ULL);
	/* Placement is not reservation. */
	KUNIT_EXPECT_EQ(test, used(rdev, 0), 0ULL);
}

#define WINDOW(w)	((u64)(w) << 40)

static bool inside(const struct drm_mm_node *n, u64 start, u64 len)
{
	return n->start >= start && n->start + n->size <= start + len;
}

/*
 * Addresses fill their chiplet's window (chiplet memory long) without
 * overlapping; freed ranges are reused, and a request fails with -ENOSPC only
 * when no free range is large enough.
 */
static void rbln_mem_addresses_stay_in_their_window(struct kunit *test)
{
	struct rbln_device *rdev = rbln_test_device(test, "rebel100 4");	/* 1 MiB each */
	const unsigned int n = SZ_1M / PAGE_SIZE;
	struct drm_mm_node *nodes = kunit_kcalloc(test, n, sizeof(*nodes), GFP_KERNEL);
	struct drm_mm_node big = {}, il = {};
	unsigned int i, j;

	KUNIT_ASSERT_NOT_NULL(test, nodes);
	for (i = 0; i < n; i++) {
		KUNIT_ASSERT_EQ(test, rbln_address_alloc(rdev, 2, PAGE_SIZE, &nodes[i]), 0);
		KUNIT_EXPECT_TRUE(test, inside(&nodes[i], WINDOW(2), SZ_1M));
		for (j = 0; j < i; j++)
			KUNIT_EXPECT_NE(test, nodes[i].start, nodes[j].start);
	}
	KUNIT_EXPECT_EQ(test, rbln_address_alloc(rdev, 2, PAGE_SIZE, &big), -ENOSPC);
	/* Every other page free: half the window, but no two pages in a row. */
	for (i = 0; i < n; i += 2)
		rbln_address_free(rdev, &nodes[i]);
	KUNIT_EXPECT_EQ(test, rbln_address_alloc(rdev, 2, 2 * PAGE_SIZE, &big), -ENOSPC);
	KUNIT_EXPECT_EQ(test, rbln_address_alloc(rdev, 2, PAGE_SIZE, &nodes[0]), 0);
	KUNIT_EXPECT_TRUE(test, inside(&nodes[0], WINDOW(2), SZ_1M));
	/* Other chiplets and interleaved buffers have windows of their own. */
	KUNIT_ASSERT_EQ(test, rbln_address_alloc(rdev, 3, SZ_1M, &big), 0);
	KUNIT_EXPECT_TRUE(test, inside(&big, WINDOW(3), SZ_1M));
	KUNIT_ASSERT_EQ(test, rbln_address_alloc(rdev, DRM_RBLN_CHIPLET_INTERLEAVED, SZ_4M, &il), 0);
	KUNIT_EXPECT_TRUE(test, inside(&il, WINDOW(RBLN_MAX_CHIPLETS), SZ_4M));

	rbln_address_free(rdev, &il);
	rbln_address_free(rdev, &big);
	for (i = 0; i < n; i++)
		rbln_address_free(rdev, &nodes[i]);	/* freeing a free node is a no-op */
}

static struct kunit_case rbln_mem_cases[] = {
	KUNIT_CASE(rbln_mem_reserve_up_to_capacity),
	KUNIT_CASE(rbln_mem_reserve_larger_than_device),
	KUNIT_CASE(rbln_mem_placement_only_on_its_chiplet),
	KUNIT_CASE(rbln_mem_interleave_split),
	KUNIT_CASE(rbln_mem_interleave_all_or_nothing),
	KUNIT_CASE(rbln_mem_single_chiplet_interleave_is_whole),
	KUNIT_CASE(rbln_mem_placed_follows_shares),
	KUNIT_CASE(rbln_mem_addresses_stay_in_their_window),
	{}
};

static struct kunit_suite rbln_mem_suite = {
	.name = "rbln_mem",
	.test_cases = rbln_mem_cases,
};
kunit_test_suite(rbln_mem_suite);
