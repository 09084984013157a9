// SPDX-License-Identifier: GPL-2.0-only
/* The simulator's fault-injection commands written to debugfs (sim/rbln_sim_debugfs.c). */
#include <kunit/test.h>

#include "rbln_kunit.h"
#include "../sim/rbln_sim.h"

static void rbln_debugfs_hang_commands(struct kunit *test)
{
	struct rbln_device *rdev = rbln_test_device(test, "rebel100 64");
	unsigned int chiplet, kind, on;

	KUNIT_ASSERT_EQ(test, rbln_sim_parse_hang(rdev, "2 task_dma\n", &chiplet, &kind, &on), 0);
	KUNIT_EXPECT_EQ(test, chiplet, 2U);
	KUNIT_EXPECT_EQ(test, kind, (unsigned int)DRM_RBLN_ENGINE_TASK_DMA);
	KUNIT_EXPECT_EQ(test, on, 1U);
	KUNIT_ASSERT_EQ(test, rbln_sim_parse_hang(rdev, "0 3 0", &chiplet, &kind, &on), 0);
	KUNIT_EXPECT_EQ(test, kind, (unsigned int)DRM_RBLN_ENGINE_EXTERNAL_HDMA);
	KUNIT_EXPECT_EQ(test, on, 0U);
}

static void rbln_debugfs_hang_rejects(struct kunit *test)
{
	static const char *const bad[] = {
		"", "0", "4 neural_dma", "0 dma", "0 4", "0 neural_dma 2", "0 neural_dma x",
		"0 neural_dma 1 1", "x neural_dma",
		"1 external_hdma",	/* External HDMA is on chiplet 0 only */
	};
	struct rbln_device *rdev = rbln_test_device(test, "rebel100 64");
	unsigned int chiplet, kind, on, i;

	for (i = 0; i < ARRAY_SIZE(bad); i++)
		KUNIT_EXPECT_EQ_MSG(test, rbln_sim_parse_hang(rdev, bad[i], &chiplet, &kind, &on),
				    -EINVAL, "\"%s\"", bad[i]);
}

static void rbln_debugfs_chiplet_down_commands(struct kunit *test)
{
	static const char *const bad[] = { "", "1 2", "1 0 0", "4", "-1", "1 down" };
	struct rbln_device *rdev = rbln_test_device(test, "rebel100 64");
	unsigned int chiplet, down, i;

	KUNIT_ASSERT_EQ(test, rbln_sim_parse_chiplet_down(rdev, "3\n", &chiplet, &down), 0);
	KUNIT_EXPECT_EQ(test, chiplet, 3U);
	KUNIT_EXPECT_EQ(test, down, 1U);
	KUNIT_ASSERT_EQ(test, rbln_sim_parse_chiplet_down(rdev, "1 0", &chiplet, &down), 0);
	KUNIT_EXPECT_EQ(test, down, 0U);
	for (i = 0; i < ARRAY_SIZE(bad); i++)
		KUNIT_EXPECT_EQ_MSG(test, rbln_sim_parse_chiplet_down(rdev, bad[i], &chiplet, &down),
				    -EINVAL, "\"%s\"", bad[i]);
}

static struct kunit_case rbln_debugfs_cases[] = {
	KUNIT_CASE(rbln_debugfs_hang_commands),
	KUNIT_CASE(rbln_debugfs_hang_rejects),
	KUNIT_CASE(rbln_debugfs_chiplet_down_commands),
	{}
};

static struct kunit_suite rbln_debugfs_suite = {
	.name = "rbln_debugfs",
	.test_cases = rbln_debugfs_cases,
};
kunit_test_suite(rbln_debugfs_suite);
