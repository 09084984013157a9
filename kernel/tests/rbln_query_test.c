// SPDX-License-Identifier: GPL-2.0-only
/* The query ioctls: GET_PARAM, DEVICE_INFO, DEVICE_STATUS and CLIENT_USAGE. */
#include <kunit/test.h>
#include <linux/ktime.h>
#include <linux/sizes.h>

#include "rbln_kunit_sim.h"

static int get_param(struct kunit *test, struct file *file, struct drm_rbln_get_param *p)
{
	return rbln_test_ioctl(test, file, DRM_IOCTL_RBLN_GET_PARAM, p);
}

static void rbln_query_param_values(struct kunit *test)
{
	struct rbln_device *rdev = rbln_test_device(test, "rebel100 64");
	struct file *file = rbln_test_open(test, rdev);
	struct drm_rbln_get_param p;

	rbln_test_bo(test, file, SZ_1M, 2, DRM_RBLN_BO_EAGER);
	p = (struct drm_rbln_get_param){ .param = DRM_RBLN_PARAM_UAPI_VERSION };
	KUNIT_ASSERT_EQ(test, get_param(test, file, &p), 0);
	KUNIT_EXPECT_EQ(test, p.value, (u64)DRM_RBLN_UAPI_VERSION);
	p = (struct drm_rbln_get_param){ .param = DRM_RBLN_PARAM_UAPI_COMPAT_VERSION };
	KUNIT_ASSERT_EQ(test, get_param(test, file, &p), 0);
	KUNIT_EXPECT_EQ(test, p.value, (u64)DRM_RBLN_UAPI_COMPAT_VERSION);
	p = (struct drm_rbln_get_param){ .param = DRM_RBLN_PARAM_DEVICE_INDEX };
	KUNIT_ASSERT_EQ(test, get_param(test, file, &p), 0);
	KUNIT_EXPECT_EQ(test, p.value, (u64)rdev->info.index);
	p = (struct drm_rbln_get_param){ .param = DRM_RBLN_PARAM_MEMORY_TOTAL };
	KUNIT_ASSERT_EQ(test, get_param(test, file, &p), 0);
	KUNIT_EXPECT_EQ(test, p.value, (u64)SZ_64M);
	p = (struct drm_rbln_get_param){ .param = DRM_RBLN_PARAM_MEMORY_USED };
	KUNIT_ASSERT_EQ(test, get_param(test, file, &p), 0);
	KUNIT_EXPECT_EQ(test, p.value, (u64)SZ_1M);

	/* Per chiplet: the memory sits on chiplet 2; External HDMA only on chiplet 0. */
	p = (struct drm_rbln_get_param){ .param = DRM_RBLN_PARAM_MEMORY_PLACED,
					 .flags = DRM_RBLN_GET_PARAM_CHIPLET, .chiplet = 2 };
	KUNIT_ASSERT_EQ(test, get_param(test, file, &p), 0);
	KUNIT_EXPECT_EQ(test, p.value, (u64)SZ_1M);
	p.chiplet = 1;
	KUNIT_ASSERT_EQ(test, get_param(test, file, &p), 0);
	KUNIT_EXPECT_EQ(test, p.value, 0ULL);
	p = (struct drm_rbln_get_param){ .param = DRM_RBLN_PARAM_ENGINE_MASK,
					 .flags = DRM_RBLN_GET_PARAM_CHIPLET, .chiplet = 0 };
	KUNIT_ASSERT_EQ(test, get_param(test, file, &p), 0);
	KUNIT_EXPECT_TRUE(test, p.value & BIT(DRM_RBLN_ENGINE_EXTERNAL_HDMA));
	p.chiplet = 3;
	KUNIT_ASSERT_EQ(test, get_param(test, file, &p), 0);
	KUNIT_EXPECT_FALSE(test, p.value & BIT(DRM_RBLN_ENGINE_EXTERNAL_HDMA));
	KUNIT_EXPECT_TRUE(test, p.value & BIT(DRM_RBLN_ENGINE_NEURAL_DMA));
}

static void rbln_query_param_rules(struct kunit *test)
{
	struct rbln_device *rdev = rbln_test_device(test, "rebel100 64");
	struct file *file = rbln_test_open(test, rdev);
	const struct {
		const char *why;
		struct drm_rbln_get_param p;
	} bad[] = {
		{ "unknown param", { .param = 1000 } },
		{ "unknown flag", { .param = DRM_RBLN_PARAM_SKU, .flags = 1U << 1 } },
		{ "reserved set", { .param = DRM_RBLN_PARAM_SKU, .reserved = 1 } },
		{ "chiplet without the flag", { .param = DRM_RBLN_PARAM_MEMORY_USED, .chiplet = 1 } },
		{ "device-wide param per chiplet", { .param = DRM_RBLN_PARAM_SKU,
						     .flags = DRM_RBLN_GET_PARAM_CHIPLET } },
		{ "chiplet-only param device-wide", { .param = DRM_RBLN_PARAM_ENGINE_MASK } },
		{ "chiplet out of range", { .param = DRM_RBLN_PARAM_MEMORY_USED,
					    .flags = DRM_RBLN_GET_PARAM_CHIPLET, .chiplet = 4 } },
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		struct drm_rbln_get_param p = bad[i].p;

		p.value = 0x5a5a;
		KUNIT_EXPECT_EQ_MSG(test, get_param(test, file, &p), -EINVAL, "%s", bad[i].why);
		KUNIT_EXPECT_EQ_MSG(test, p.value, 0x5a5aULL, "%s: value untouched", bad[i].why);
	}
}

static void rbln_query_device_info(struct kunit *test)
{
	struct rbln_device *rdev = rbln_test_device(test, "atom-max 16");
	struct file *file = rbln_test_open(test, rdev);
	struct drm_rbln_device_info info = {};

	KUNIT_ASSERT_EQ(test, rbln_test_ioctl(test, file, DRM_IOCTL_RBLN_DEVICE_INFO, &info), 0);
	KUNIT_EXPECT_EQ(test, info.index, rdev->info.index);
	KUNIT_EXPECT_EQ(test, info.sku, (u32)DRM_RBLN_SKU_ATOM_MAX);
	KUNIT_EXPECT_EQ(test, info.pci_vendor_id, (u16)DRM_RBLN_PCI_VENDOR_ID);
	KUNIT_EXPECT_EQ(test, info.chiplet_count, 1U);
	KUNIT_EXPECT_EQ(test, info.memory_total, (u64)SZ_16M);
	KUNIT_EXPECT_EQ(test, info.uapi_version, (u32)DRM_RBLN_UAPI_VERSION);
	KUNIT_EXPECT_TRUE(test, info.capabilities & DRM_RBLN_CAP_SIMULATED);
	KUNIT_EXPECT_EQ(test, memcmp(info.uuid, &rdev->info.uuid, sizeof(info.uuid)), 0);

	info = (struct drm_rbln_device_info){ .flags = 1 };
	KUNIT_EXPECT_EQ(test, rbln_test_ioctl(test, file, DRM_IOCTL_RBLN_DEVICE_INFO, &info),
			-EINVAL);
	info = (struct drm_rbln_device_info){ .reserved0 = 1 };
	KUNIT_EXPECT_EQ(test, rbln_test_ioctl(test, file, DRM_IOCTL_RBLN_DEVICE_INFO, &info),
			-EINVAL);
}

/* DEVICE_STATUS reads the sensors at each call: a busy window moves them all. */
static void rbln_query_device_status(struct kunit *test)
{
	struct rbln_device *rdev = rbln_test_device(test, "atom 16");
	struct file *file = rbln_test_open(test, rdev);
	struct drm_rbln_device_status s = {}, idle = {};

	KUNIT_ASSERT_EQ(test, rbln_test_ioctl(test, file, DRM_IOCTL_RBLN_DEVICE_STATUS, &idle), 0);
	KUNIT_EXPECT_EQ(test, idle.status, (u32)DRM_RBLN_STATUS_READY);
	KUNIT_EXPECT_EQ(test, idle.utilization, 0U);
	KUNIT_EXPECT_GT(test, idle.temperature_mc, 0);
	KUNIT_EXPECT_GT(test, idle.power_uw, 0ULL);

	/* A window that ended now, busy all along: every sensor follows. */
	spin_lock(&rdev->busy.lock);
	rdev->busy.sample_time_ns = ktime_get_ns() - NSEC_PER_SEC;
	rdev->busy.total_ns += NSEC_PER_SEC;
	spin_unlock(&rdev->busy.lock);
	KUNIT_ASSERT_EQ(test, rbln_test_ioctl(test, file, DRM_IOCTL_RBLN_DEVICE_STATUS, &s), 0);
	KUNIT_EXPECT_GE(test, s.utilization, 90U);
	KUNIT_EXPECT_LE(test, s.utilization, 100U);
	KUNIT_EXPECT_GT(test, s.temperature_mc, idle.temperature_mc);
	KUNIT_EXPECT_GT(test, s.power_uw, idle.power_uw);
	KUNIT_EXPECT_NE(test, s.pstate, idle.pstate);
	KUNIT_EXPECT_GE(test, s.busy_ns, idle.busy_ns + NSEC_PER_SEC);

	s = (struct drm_rbln_device_status){ .flags = 1 };
	KUNIT_EXPECT_EQ(test, rbln_test_ioctl(test, file, DRM_IOCTL_RBLN_DEVICE_STATUS, &s),
			-EINVAL);
	s = (struct drm_rbln_device_status){ .reserved = 1 };
	KUNIT_EXPECT_EQ(test, rbln_test_ioctl(test, file, DRM_IOCTL_RBLN_DEVICE_STATUS, &s),
			-EINVAL);
}

/* CLIENT_USAGE counts this file's buffers only: total, resident, device memory. */
static void rbln_query_client_usage(struct kunit *test)
{
	struct rbln_device *rdev = rbln_test_device(test, "atom 16");
	struct file *file = rbln_test_open(test, rdev), *other = rbln_test_open(test, rdev);
	struct drm_rbln_client_usage u = {};

	rbln_test_bo(test, file, SZ_1M, 0, DRM_RBLN_BO_EAGER);
	rbln_test_bo(test, file, SZ_2M, 0, 0);
	rbln_test_bo(test, file, SZ_64K, 0, DRM_RBLN_BO_HOST);
	rbln_test_bo(test, other, SZ_4M, 0, DRM_RBLN_BO_EAGER);

	KUNIT_ASSERT_EQ(test, rbln_test_ioctl(test, file, DRM_IOCTL_RBLN_CLIENT_USAGE, &u), 0);
	KUNIT_EXPECT_EQ(test, u.client_id, rbln_test_client(file)->id);
	KUNIT_EXPECT_EQ(test, u.memory_total, (u64)SZ_1M + SZ_2M + SZ_64K);
	KUNIT_EXPECT_EQ(test, u.device_memory, (u64)SZ_1M + SZ_2M);
	KUNIT_EXPECT_GE(test, u.memory_resident, (u64)SZ_1M);
	KUNIT_EXPECT_LE(test, u.memory_resident, (u64)SZ_1M + SZ_64K);

	u = (struct drm_rbln_client_usage){ .flags = 1 };
	KUNIT_EXPECT_EQ(test, rbln_test_ioctl(test, file, DRM_IOCTL_RBLN_CLIENT_USAGE, &u),
			-EINVAL);
	u = (struct drm_rbln_client_usage){ .reserved = 1 };
	KUNIT_EXPECT_EQ(test, rbln_test_ioctl(test, file, DRM_IOCTL_RBLN_CLIENT_USAGE, &u),
			-EINVAL);
}

static struct kunit_case rbln_query_cases[] = {
	KUNIT_CASE(rbln_query_param_values),
	KUNIT_CASE(rbln_query_param_rules),
	KUNIT_CASE(rbln_query_device_info),
	KUNIT_CASE(rbln_query_device_status),
	KUNIT_CASE(rbln_query_client_usage),
	{}
};

static struct kunit_suite rbln_query_suite = {
	.name = "rbln_query",
	.test_cases = rbln_query_cases,
};
kunit_test_suite(rbln_query_suite);
