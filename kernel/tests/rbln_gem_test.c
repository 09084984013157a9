// SPDX-License-Identifier: GPL-2.0-only
/* Buffer creation: argument rules, lazy and eager accounting, release. */
#include <kunit/test.h>
#include <linux/sizes.h>
#include <drm/drm.h>

#include "rbln_kunit_sim.h"

static int bo_create(struct kunit *test, struct file *file, struct drm_rbln_bo_create *args)
{
	return rbln_test_ioctl(test, file, DRM_IOCTL_RBLN_BO_CREATE, args);
}

static void rbln_gem_create_rejects_bad_arguments(struct kunit *test)
{
	struct rbln_device *rdev = rbln_test_device(test, "rebel100 64");
	struct file *file = rbln_test_open(test, rdev);
	const struct {
		const char *why;
		struct drm_rbln_bo_create args;
		int err;
	} cases[] = {
		{ "zero size", { .size = 0 }, -EINVAL },
		{ "size overflows when rounded", { .size = U64_MAX }, -EINVAL },
		{ "unknown flag", { .size = PAGE_SIZE, .flags = 1U << 5 }, -EINVAL },
		{ "PLACED is an output", { .size = PAGE_SIZE, .flags = DRM_RBLN_BO_PLACED }, -EINVAL },
		{ "reserved set", { .size = PAGE_SIZE, .reserved = 1 }, -EINVAL },
		{ "chiplet 4 of 4", { .size = PAGE_SIZE, .chiplet = 4 }, -EINVAL },
		{ "host buffer with a chiplet", { .size = PAGE_SIZE, .flags = DRM_RBLN_BO_HOST,
						  .chiplet = 1 }, -EINVAL },
		{ "host buffer too large", { .size = DRM_RBLN_HOST_BO_MAX + 1,
					     .flags = DRM_RBLN_BO_HOST }, -E2BIG },
		{ "more than the chiplet has", { .size = 16 * SZ_1M + 1, .chiplet = 2 }, -ENOSPC },
		{ "more than the device has", { .size = 64 * SZ_1M + PAGE_SIZE,
						.chiplet = DRM_RBLN_CHIPLET_INTERLEAVED }, -ENOSPC },
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(cases); i++) {
		struct drm_rbln_bo_create args = cases[i].args;

		KUNIT_EXPECT_EQ_MSG(test, bo_create(test, file, &args), cases[i].err, "%s",
				    cases[i].why);
		KUNIT_EXPECT_EQ_MSG(test, args.handle, 0U, "%s: no handle", cases[i].why);
	}
	KUNIT_EXPECT_EQ(test, rbln_device_memory_used(rdev), 0ULL);
}

/* Lazy buffers reserve at once and get backing on first use; eager ones at once. */
static void rbln_gem_lazy_and_eager_accounting(struct kunit *test)
{
	struct rbln_device *rdev = rbln_test_device(test, "rebel100 64");
	struct file *file = rbln_test_open(test, rdev);
	struct drm_rbln_bo_info info = {};
	u32 lazy, eager;

	lazy = rbln_test_bo(test, file, SZ_1M, 1, 0);
	KUNIT_EXPECT_EQ(test, rbln_device_memory_used(rdev), (u64)SZ_1M);
	KUNIT_EXPECT_EQ(test, rbln_device_memory_placed(rdev), 0ULL);
	KUNIT_EXPECT_EQ(test, atomic64_read(&rdev->chiplets[1].memory_used), (s64)SZ_1M);

	eager = rbln_test_bo(test, file, SZ_2M + 1, DRM_RBLN_CHIPLET_INTERLEAVED,
			     DRM_RBLN_BO_EAGER);
	/* Sizes round up to whole pages. */
	KUNIT_EXPECT_EQ(test, rbln_device_memory_used(rdev), (u64)SZ_1M + SZ_2M + PAGE_SIZE);
	KUNIT_EXPECT_EQ(test, rbln_device_memory_placed(rdev), (u64)SZ_2M + PAGE_SIZE);

	info.handle = eager;
	KUNIT_ASSERT_EQ(test, rbln_test_ioctl(test, file, DRM_IOCTL_RBLN_BO_INFO, &info), 0);
	KUNIT_EXPECT_EQ(test, info.size, (u64)SZ_2M + PAGE_SIZE);
	KUNIT_EXPECT_EQ(test, info.chiplet, DRM_RBLN_CHIPLET_INTERLEAVED);
	KUNIT_EXPECT_TRUE(test, info.flags & DRM_RBLN_BO_PLACED);

	info = (struct drm_rbln_bo_info){ .handle = lazy };
	KUNIT_ASSERT_EQ(test, rbln_test_ioctl(test, file, DRM_IOCTL_RBLN_BO_INFO, &info), 0);
	KUNIT_EXPECT_FALSE(test, info.flags & DRM_RBLN_BO_PLACED);
	rbln_test_lookup(test, file, lazy);	/* first use places it */
	KUNIT_EXPECT_EQ(test, rbln_device_memory_placed(rdev), (u64)SZ_1M + SZ_2M + PAGE_SIZE);
}

static void rbln_gem_info_rejects_bad_arguments(struct kunit *test)
{
	struct rbln_device *rdev = rbln_test_device(test, "atom 16");
	struct file *file = rbln_test_open(test, rdev), *other = rbln_test_open(test, rdev);
	u32 handle = rbln_test_bo(test, file, PAGE_SIZE, 0, 0);
	struct drm_rbln_bo_info info = { .handle = handle, .flags = 1 };

	KUNIT_EXPECT_EQ(test, rbln_test_ioctl(test, file, DRM_IOCTL_RBLN_BO_INFO, &info), -EINVAL);
	info = (struct drm_rbln_bo_info){ .handle = handle, .reserved = 1 };
	KUNIT_EXPECT_EQ(test, rbln_test_ioctl(test, file, DRM_IOCTL_RBLN_BO_INFO, &info), -EINVAL);
	info = (struct drm_rbln_bo_info){ .handle = handle + 1 };
	KUNIT_EXPECT_EQ(test, rbln_test_ioctl(test, file, DRM_IOCTL_RBLN_BO_INFO, &info), -ENOENT);
	/* Handles belong to the file that made them. */
	info = (struct drm_rbln_bo_info){ .handle = handle };
	KUNIT_EXPECT_EQ(test, rbln_test_ioctl(test, other, DRM_IOCTL_RBLN_BO_INFO, &info), -ENOENT);
}

/* Closing a handle or the file gives the memory back. */
static void rbln_gem_release_returns_memory(struct kunit *test)
{
	struct rbln_device *rdev = rbln_test_device(test, "atom 16");
	struct file *file = rbln_test_open(test, rdev);
	struct drm_gem_close close = {};

	close.handle = rbln_test_bo(test, file, SZ_4M, 0, DRM_RBLN_BO_EAGER);
	rbln_test_bo(test, file, SZ_8M, 0, 0);
	KUNIT_EXPECT_EQ(test, rbln_device_memory_used(rdev), (u64)SZ_4M + SZ_8M);
	KUNIT_ASSERT_EQ(test, rbln_test_ioctl(test, file, DRM_IOCTL_GEM_CLOSE, &close), 0);
	KUNIT_EXPECT_EQ(test, rbln_device_memory_used(rdev), (u64)SZ_8M);
	KUNIT_EXPECT_EQ(test, rbln_device_memory_placed(rdev), 0ULL);
	rbln_test_close(test, file);
	KUNIT_EXPECT_EQ(test, rbln_device_memory_used(rdev), 0ULL);
}

static struct kunit_case rbln_gem_cases[] = {
	KUNIT_CASE(rbln_gem_create_rejects_bad_arguments),
	KUNIT_CASE(rbln_gem_lazy_and_eager_accounting),
	KUNIT_CASE(rbln_gem_info_rejects_bad_arguments),
	KUNIT_CASE(rbln_gem_release_returns_memory),
	{}
};

static struct kunit_suite rbln_gem_suite = {
	.name = "rbln_gem",
	.test_cases = rbln_gem_cases,
};
kunit_test_suite(rbln_gem_suite);
