// SPDX-License-Identifier: GPL-2.0-only
/* The simulation backend: new_device parsing and the device lifecycle. */
#include <kunit/device.h>
#include <kunit/test.h>
#include <linux/sizes.h>
#include <drm/drm_drv.h>

#include "../rbln_client.h"
#include "../sim/rbln_sim.h"
#include "rbln_kunit_sim.h"

static void rbln_sim_parse_valid(struct kunit *test)
{
	struct rbln_sim_spec spec;

	KUNIT_ASSERT_EQ(test, rbln_sim_parse_spec("3 rebel100\n", 0, &spec), 0);
	KUNIT_EXPECT_EQ(test, spec.id, 3U);
	KUNIT_EXPECT_EQ(test, spec.sku->id, DRM_RBLN_SKU_REBEL100);
	KUNIT_EXPECT_EQ(test, spec.memory, 140ULL * SZ_1G);

	KUNIT_ASSERT_EQ(test, rbln_sim_parse_spec("0 RBLN-CA12 64", 0, &spec), 0);
	KUNIT_EXPECT_EQ(test, spec.sku->id, DRM_RBLN_SKU_ATOM);
	KUNIT_EXPECT_EQ(test, spec.memory, 64ULL * SZ_1M);

	/* The sim_memory_mib default applies when no size is given ... */
	KUNIT_ASSERT_EQ(test, rbln_sim_parse_spec("1 atom-max", 32, &spec), 0);
	KUNIT_EXPECT_EQ(test, spec.memory, 32ULL * SZ_1M);
	/* ... and an explicit one wins. */
	KUNIT_ASSERT_EQ(test, rbln_sim_parse_spec("1 atom-max 8\n", 32, &spec), 0);
	KUNIT_EXPECT_EQ(test, spec.memory, 8ULL * SZ_1M);
}

static void rbln_sim_parse_invalid(struct kunit *test)
{
	static const char *const bad[] = {
		"", "\n", "rebel100", "x rebel100", "1", "1 rebel", "1 atom 0",
		"1 atom 64 extra", "-1 atom", "1 atom abc", "1 atom 64x", "0x1 atom",
		"1 atom 1048577",	/* over the 1 TiB address window of a chiplet */
	};
	struct rbln_sim_spec spec;
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(bad); i++)
		KUNIT_EXPECT_EQ_MSG(test, rbln_sim_parse_spec(bad[i], 0, &spec), -EINVAL,
				    "spec \"%s\"", bad[i]);
}

static void rbln_sim_lifecycle(struct kunit *test)
{
	struct rbln_device *rdev = rbln_test_device(test, "rebel100 64"), *found;
	unsigned int id = rdev->info.index, i;

	KUNIT_EXPECT_EQ(test, rdev->nr_chiplets, 4U);
	KUNIT_EXPECT_EQ(test, rbln_device_status(rdev), DRM_RBLN_STATUS_READY);
	found = rbln_sim_find_device(rdev->info.index);
	KUNIT_EXPECT_PTR_EQ(test, found, rdev);
	if (found)
		drm_dev_put(&found->drm);
	KUNIT_EXPECT_TRUE(test, rdev->drm.accel || rdev->drm.render);
	for (i = 0; i < rdev->nr_chiplets; i++) {
		const struct rbln_chiplet *c = &rdev->chiplets[i];

		KUNIT_EXPECT_EQ(test, c->memory_total, 16ULL * SZ_1M);
		KUNIT_EXPECT_TRUE(test, c->engines[DRM_RBLN_ENGINE_NEURAL_DMA].present);
		KUNIT_EXPECT_TRUE(test, c->engines[DRM_RBLN_ENGINE_TASK_DMA].present);
		KUNIT_EXPECT_TRUE(test, c->engines[DRM_RBLN_ENGINE_DEVICE_HDMA].present);
		/* External HDMA (host <-> device) exists on chiplet 0 only. */
		KUNIT_EXPECT_EQ(test, c->engines[DRM_RBLN_ENGINE_EXTERNAL_HDMA].present, i == 0);
	}
	rbln_test_remove_device(test, rdev);
	KUNIT_EXPECT_NULL(test, rbln_sim_find_device(id));
}

static void rbln_sim_duplicate_and_missing_ids(struct kunit *test)
{
	struct rbln_device *rdev = rbln_test_device(test, "atom 16");
	char spec[32];

	snprintf(spec, sizeof(spec), "%u rebel100", rdev->info.index);
	KUNIT_EXPECT_EQ(test, rbln_sim_new_device(spec), -EEXIST);
	/* The existing device is untouched. */
	KUNIT_EXPECT_EQ(test, rdev->nr_chiplets, 1U);
	KUNIT_EXPECT_EQ(test, rbln_sim_new_device("255 atom"), -EINVAL);
	KUNIT_EXPECT_EQ(test, rbln_sim_del_device(254), -ENOENT);
}

/*
 * Hot-unplug with files open: the files stay valid, every call that touches
 * the device gets -ENODEV, and a RESET does not turn FINISH back into READY.
 * (For calls already in the device as it goes, see rbln_race_test.c.)
 */
static void rbln_sim_remove_with_open_file(struct kunit *test)
{
	struct rbln_device *rdev = rbln_test_device(test, "atom 16");
	struct file *file = rbln_test_open(test, rdev), *other = rbln_test_open(test, rdev);
	struct drm_rbln_get_param param = { .param = DRM_RBLN_PARAM_CHIPLET_COUNT };
	struct drm_rbln_bo_create bo = { .size = PAGE_SIZE };
	struct drm_rbln_bo_info info = {};
	struct drm_rbln_device_info dinfo = {};
	struct drm_rbln_client_usage usage = {};
	struct drm_rbln_device_status status = {};
	struct drm_rbln_acquire acquire = {};
	struct drm_rbln_reclaim reclaim = { .client_id = rbln_test_client(other)->id,
					    .flags = DRM_RBLN_RECLAIM_FORCE };
	struct drm_rbln_reset reset = { .flags = DRM_RBLN_RESET_FORCE };

	KUNIT_ASSERT_EQ(test, rbln_test_ioctl(test, file, DRM_IOCTL_RBLN_GET_PARAM, &param), 0);
	KUNIT_EXPECT_EQ(test, param.value, 1ULL);
	info.handle = rbln_test_bo(test, file, SZ_64K, 0, DRM_RBLN_BO_EAGER);
	KUNIT_ASSERT_EQ(test, rbln_test_ioctl(test, file, DRM_IOCTL_RBLN_ACQUIRE, &acquire), 0);

	rbln_test_remove_device(test, rdev);
	KUNIT_EXPECT_EQ(test, atomic_read(&rdev->status), DRM_RBLN_STATUS_FINISH);
	KUNIT_EXPECT_EQ(test, rbln_test_ioctl(test, file, DRM_IOCTL_RBLN_GET_PARAM, &param),
			-ENODEV);
	KUNIT_EXPECT_EQ(test, rbln_test_ioctl(test, file, DRM_IOCTL_RBLN_DEVICE_INFO, &dinfo),
			-ENODEV);
	KUNIT_EXPECT_EQ(test, rbln_test_ioctl(test, file, DRM_IOCTL_RBLN_BO_CREATE, &bo), -ENODEV);
	KUNIT_EXPECT_EQ(test, rbln_test_ioctl(test, file, DRM_IOCTL_RBLN_BO_INFO, &info), -ENODEV);
	KUNIT_EXPECT_EQ(test, rbln_test_ioctl(test, file, DRM_IOCTL_RBLN_CLIENT_USAGE, &usage),
			-ENODEV);
	KUNIT_EXPECT_EQ(test, rbln_test_ioctl(test, file, DRM_IOCTL_RBLN_DEVICE_STATUS, &status),
			-ENODEV);
	KUNIT_EXPECT_EQ(test, rbln_test_ioctl(test, other, DRM_IOCTL_RBLN_ACQUIRE, &acquire),
			-ENODEV);
	KUNIT_EXPECT_EQ(test, rbln_test_ioctl(test, file, DRM_IOCTL_RBLN_RELEASE, &acquire),
			-ENODEV);
	KUNIT_EXPECT_EQ(test, rbln_test_ioctl(test, file, DRM_IOCTL_RBLN_RECLAIM, &reclaim),
			-ENODEV);
	KUNIT_EXPECT_EQ(test, rbln_test_ioctl(test, file, DRM_IOCTL_RBLN_RESET, &reset), -ENODEV);
	KUNIT_EXPECT_EQ(test, atomic_read(&rdev->status), DRM_RBLN_STATUS_FINISH);
	/* Closing afterwards frees the rest (KASAN and kmemleak watch this). */
	rbln_test_close(test, file);
	rbln_test_close(test, other);
}

static int rbln_sim_fail_registering(enum rbln_test_point_id point)
{
	return point == RBLN_TP_PROBE_REGISTERING ? -EIO : 0;
}

/*
 * A probe that fails leaves nothing behind in the parent device: devm frees
 * the device, so the parent's driver data must not point at it (it did: a
 * PCI device outlives its failed probe).  The simulator's device list and
 * the next device are unaffected.
 */
static void rbln_sim_failed_probe(struct kunit *test)
{
	struct device *parent = kunit_device_register(test, "rbln-probe");
	struct rbln_hw_info info = { .sku = rbln_sku_by_key("atom"), .index = 249,
				     .memory_total = SZ_16M, .job_max_bytes = SZ_16M };
	struct rbln_device *rdev;

	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, parent);
	rbln_sim_fill_engines(info.sku->chiplets, &info);
	rbln_test_set_point_hook(test, rbln_sim_fail_registering);
	rdev = rbln_device_create(parent, &info, &rbln_sim_hw_ops, NULL);
	KUNIT_EXPECT_EQ(test, PTR_ERR_OR_ZERO(rdev), -EIO);
	KUNIT_EXPECT_NULL(test, dev_get_drvdata(parent));

	/* Through the simulator: new_device says the probe failed, and lists nothing. */
	KUNIT_EXPECT_EQ(test, rbln_sim_new_device("249 atom 16"), -EIO);
	KUNIT_EXPECT_NULL(test, rbln_sim_find_device(249));
	WRITE_ONCE(rbln_test_point_hook, NULL);
	rbln_test_device(test, "atom 16");
}

static void rbln_sim_del_248(void *unused)
{
	rbln_sim_del_device(248);	/* -ENOENT once the test point did */
}

static int rbln_sim_remove_when_found(enum rbln_test_point_id point)
{
	if (point == RBLN_TP_SIM_FOUND) {
		WRITE_ONCE(rbln_test_point_hook, NULL);
		rbln_sim_del_device(248);
	}
	return 0;
}

/*
 * Finding a device by id races its removal: what it returns stays valid
 * until the caller puts it (it used to come without a reference, freed by
 * the removal: KASAN use-after-free).
 */
static void rbln_sim_find_races_removal(struct kunit *test)
{
	struct rbln_device *rdev;

	KUNIT_ASSERT_EQ(test, rbln_sim_new_device("248 atom 16"), 0);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, rbln_sim_del_248, NULL), 0);
	rbln_test_set_point_hook(test, rbln_sim_remove_when_found);
	rdev = rbln_sim_find_device(248);
	KUNIT_ASSERT_NOT_NULL(test, rdev);
	KUNIT_EXPECT_EQ(test, rdev->info.index, 248U);
	KUNIT_EXPECT_EQ(test, atomic_read(&rdev->status), DRM_RBLN_STATUS_FINISH);
	drm_dev_put(&rdev->drm);
	KUNIT_EXPECT_NULL(test, rbln_sim_find_device(248));
}

static struct kunit_case rbln_sim_cases[] = {
	KUNIT_CASE(rbln_sim_parse_valid),
	KUNIT_CASE(rbln_sim_parse_invalid),
	KUNIT_CASE(rbln_sim_lifecycle),
	KUNIT_CASE(rbln_sim_duplicate_and_missing_ids),
	KUNIT_CASE(rbln_sim_remove_with_open_file),
	KUNIT_CASE(rbln_sim_failed_probe),
	KUNIT_CASE(rbln_sim_find_races_removal),
	{}
};

static struct kunit_suite rbln_sim_suite = {
	.name = "rbln_sim",
	.test_cases = rbln_sim_cases,
};
kunit_test_suite(rbln_sim_suite);
