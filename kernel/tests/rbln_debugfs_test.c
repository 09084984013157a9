// SPDX-License-Identifier: GPL-2.0-only
/*
 * The simulator's fault-injection commands (sim/rbln_sim_debugfs.c) written
 * to the device's debugfs files through the VFS, from user memory as echo
 * writes them, and what each write does to the device.
 */
#include <kunit/test.h>
#include <linux/fs.h>
#include <linux/string.h>

#include "rbln_kunit_sim.h"

/* Writes @cmd to the file @name of @rdev's debugfs directory: 0 if it all went, else the error. */
static ssize_t debugfs_write(struct kunit *test, struct rbln_device *rdev, const char *name,
			     const char *cmd)
{
	size_t len = strlen(cmd);
	void __user *buf = rbln_test_user_copy(test, cmd, len + 1);	/* never 0 bytes */
	char path[64];
	struct file *f;
	loff_t pos = 0;
	ssize_t ret;

	/* The KUnit init mounts debugfs before it loads the module. */
	snprintf(path, sizeof(path), "/sys/kernel/debug/rbln/rbln%u/%s", rdev->info.index, name);
	f = filp_open(path, O_WRONLY, 0);
	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR(f), "%s: %ld", path, PTR_ERR(f));
	ret = f->f_op->write(f, buf, len, &pos);
	filp_close(f, NULL);
	return ret == (ssize_t)len ? 0 : ret;
}

static bool hung(struct rbln_device *rdev, u32 chiplet, u32 kind)
{
	return READ_ONCE(rbln_test_sim(rdev)->engines[chiplet][kind].hung);
}

static unsigned int engines_hung(struct rbln_device *rdev)
{
	unsigned int c, k, n = 0;

	for (c = 0; c < rdev->nr_chiplets; c++)
		for (k = 0; k < DRM_RBLN_ENGINE_COUNT; k++)
			n += hung(rdev, c, k);
	return n;
}

static void rbln_debugfs_hang_commands(struct kunit *test)
{
	struct rbln_device *rdev = rbln_test_device(test, "rebel100 64");

	KUNIT_EXPECT_EQ(test, debugfs_write(test, rdev, "hang", "2 task_dma\n"), 0);
	KUNIT_EXPECT_TRUE(test, hung(rdev, 2, DRM_RBLN_ENGINE_TASK_DMA));
	KUNIT_EXPECT_EQ(test, debugfs_write(test, rdev, "hang", "0 3"), 0);
	KUNIT_EXPECT_TRUE(test, hung(rdev, 0, DRM_RBLN_ENGINE_EXTERNAL_HDMA));
	KUNIT_EXPECT_EQ(test, engines_hung(rdev), 2U);
	KUNIT_EXPECT_EQ(test, debugfs_write(test, rdev, "hang", "2 1 0"), 0);
	KUNIT_EXPECT_FALSE(test, hung(rdev, 2, DRM_RBLN_ENGINE_TASK_DMA));
	KUNIT_EXPECT_EQ(test, debugfs_write(test, rdev, "hang", "0 external_hdma 0"), 0);
	KUNIT_EXPECT_EQ(test, engines_hung(rdev), 0U);
}

static void rbln_debugfs_hang_rejects(struct kunit *test)
{
	static const char *const bad[] = {
		"", "0", "4 neural_dma", "0 dma", "0 4", "0 neural_dma 2", "0 neural_dma x",
		"0 neural_dma 1 1", "x neural_dma",
		"1 external_hdma",	/* External HDMA is on chiplet 0 only */
		"0 neural_dma                                                     1",	/* over 63 bytes */
	};
	struct rbln_device *rdev = rbln_test_device(test, "rebel100 64");
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(bad); i++)
		KUNIT_EXPECT_EQ_MSG(test, debugfs_write(test, rdev, "hang", bad[i]), (ssize_t)-EINVAL,
				    "\"%s\"", bad[i]);
	KUNIT_EXPECT_EQ(test, engines_hung(rdev), 0U);
}

static void rbln_debugfs_chiplet_down_commands(struct kunit *test)
{
	static const char *const bad[] = { "", "1 2", "1 0 0", "4", "-1", "1 down" };
	struct rbln_device *rdev = rbln_test_device(test, "rebel100 64");
	unsigned int i;

	KUNIT_EXPECT_EQ(test, debugfs_write(test, rdev, "chiplet_down", "3\n"), 0);
	KUNIT_EXPECT_TRUE(test, rdev->chiplets[3].down);
	KUNIT_EXPECT_TRUE(test, rbln_test_sim(rdev)->chiplet_down[3]);
	KUNIT_EXPECT_EQ(test, debugfs_write(test, rdev, "chiplet_down", "3 0"), 0);
	KUNIT_EXPECT_FALSE(test, rdev->chiplets[3].down);
	for (i = 0; i < ARRAY_SIZE(bad); i++)
		KUNIT_EXPECT_EQ_MSG(test, debugfs_write(test, rdev, "chiplet_down", bad[i]),
				    (ssize_t)-EINVAL, "\"%s\"", bad[i]);
	for (i = 0; i < rdev->nr_chiplets; i++)
		KUNIT_EXPECT_FALSE_MSG(test, rdev->chiplets[i].down, "chiplet %u", i);
}

static void rbln_debugfs_memory_error_command(struct kunit *test)
{
	struct rbln_device *rdev = rbln_test_device(test, "rebel100 64");

	KUNIT_EXPECT_EQ(test, debugfs_write(test, rdev, "memory_error", "4"), (ssize_t)-EINVAL);
	KUNIT_EXPECT_EQ(test, rbln_device_status(rdev), DRM_RBLN_STATUS_READY);
	KUNIT_EXPECT_EQ(test, debugfs_write(test, rdev, "memory_error", "1\n"), 0);
	KUNIT_EXPECT_EQ(test, rbln_device_status(rdev), DRM_RBLN_STATUS_FAULT);
}

static struct kunit_case rbln_debugfs_cases[] = {
	KUNIT_CASE(rbln_debugfs_hang_commands),
	KUNIT_CASE(rbln_debugfs_hang_rejects),
	KUNIT_CASE(rbln_debugfs_chiplet_down_commands),
	KUNIT_CASE(rbln_debugfs_memory_error_command),
	{}
};

static struct kunit_suite rbln_debugfs_suite = {
	.name = "rbln_debugfs",
	.test_cases = rbln_debugfs_cases,
};
kunit_test_suite(rbln_debugfs_suite);
