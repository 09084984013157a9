// SPDX-License-Identifier: GPL-2.0-only
/*
 * The simulator's fault injection, in the core's debugfs directory of the
 * device, /sys/kernel/debug/rbln/rbln<index>/:
 *   fail_next_jobs   N: the next N jobs on any engine fail with -EIO
 *   hang             "CHIPLET ENGINE [0|1]": the engine stops finishing jobs
 *                    (1, the default) or recovers (0); a job that waits longer
 *                    than job_timeout_ms is cancelled and the engine reset
 *   chiplet_down     "CHIPLET [0|1]": the chiplet goes offline (1) or back (0)
 *   memory_error     "CHIPLET": an uncorrectable memory error: status FAULT
 * ENGINE is a name from chipletN/engines or its number in enum drm_rbln_engine.
 */
#include <linux/debugfs.h>
#include <linux/kernel.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <drm/drm_print.h>

#include "../rbln_device.h"
#include "rbln_sim.h"

static int rbln_parse_engine(const char *word, unsigned int *kind)
{
	unsigned int k;

	for (k = 0; k < DRM_RBLN_ENGINE_COUNT; k++)
		if (!strcmp(word, rbln_engine_name(k))) {
			*kind = k;
			return 0;
		}
	return kstrtouint(word, 0, kind) || *kind >= DRM_RBLN_ENGINE_COUNT ? -EINVAL : 0;
}

static int rbln_parse_chiplet(const struct rbln_device *rdev, const char *word, unsigned int *chiplet)
{
	return kstrtouint(word, 0, chiplet) || *chiplet >= rdev->nr_chiplets ? -EINVAL : 0;
}

/* An optional trailing "0" or "1"; @on keeps its default without one. */
static int rbln_parse_switch(int argc, char **argv, int at, unsigned int *on)
{
	if (argc <= at)
		return 0;
	return kstrtouint(argv[at], 0, on) || *on > 1 ? -EINVAL : 0;
}

static int rbln_sim_parse_hang(const struct rbln_device *rdev, const char *cmd,
			       unsigned int *chiplet, unsigned int *kind, unsigned int *on)
{
	int argc, ret = -EINVAL;
	char **argv = argv_split(GFP_KERNEL, cmd, &argc);

	if (!argv)
		return -ENOMEM;
	*on = 1;
	if (argc >= 2 && argc <= 3 && !rbln_parse_chiplet(rdev, argv[0], chiplet) &&
	    !rbln_parse_engine(argv[1], kind) && !rbln_parse_switch(argc, argv, 2, on) &&
	    rdev->chiplets[*chiplet].engines[*kind].present)
		ret = 0;
	argv_free(argv);
	return ret;
}

static int rbln_sim_parse_chiplet_down(const struct rbln_device *rdev, const char *cmd,
				       unsigned int *chiplet, unsigned int *down)
{
	int argc, ret = -EINVAL;
	char **argv = argv_split(GFP_KERNEL, cmd, &argc);

	if (!argv)
		return -ENOMEM;
	*down = 1;
	if (argc >= 1 && argc <= 2 && !rbln_parse_chiplet(rdev, argv[0], chiplet) &&
	    !rbln_parse_switch(argc, argv, 1, down))
		ret = 0;
	argv_free(argv);
	return ret;
}

/* Reads a short command line from user space into @buf. */
static int rbln_read_command(const char __user *ubuf, size_t len, char *buf, size_t size)
{
	if (len >= size)
		return -EINVAL;
	if (copy_from_user(buf, ubuf, len))
		return -EFAULT;
	buf[len] = '\0';
	return 0;
}

static ssize_t rbln_hang_write(struct file *f, const char __user *ubuf, size_t len, loff_t *pos)
{
	struct rbln_device *rdev = f->private_data;
	unsigned int chiplet, kind, on;
	char buf[64];
	int ret;

	ret = rbln_read_command(ubuf, len, buf, sizeof(buf));
	if (!ret)
		ret = rbln_sim_parse_hang(rdev, buf, &chiplet, &kind, &on);
	if (ret)
		return ret;
	rbln_sim_set_hang(rdev, chiplet, kind, on);
	return len;
}

static ssize_t rbln_chiplet_down_write(struct file *f, const char __user *ubuf, size_t len,
				       loff_t *pos)
{
	struct rbln_device *rdev = f->private_data;
	unsigned int chiplet, down;
	char buf[32];
	int ret;

	ret = rbln_read_command(ubuf, len, buf, sizeof(buf));
	if (!ret)
		ret = rbln_sim_parse_chiplet_down(rdev, buf, &chiplet, &down);
	if (ret)
		return ret;
	rbln_sim_set_chiplet_down(rdev, chiplet, down);
	return len;
}

static ssize_t rbln_memory_error_write(struct file *f, const char __user *ubuf, size_t len,
				       loff_t *pos)
{
	struct rbln_device *rdev = f->private_data;
	unsigned int chiplet;
	char buf[32];
	int ret;

	ret = rbln_read_command(ubuf, len, buf, sizeof(buf));
	if (ret)
		return ret;
	if (rbln_parse_chiplet(rdev, strim(buf), &chiplet))
		return -EINVAL;
	rbln_hw_memory_error(rdev, chiplet);
	return len;
}

#define RBLN_DEBUGFS_WO(_name)						\
static const struct file_operations rbln_##_name##_fops = {		\
	.owner = THIS_MODULE,						\
	.open = simple_open,						\
	.write = rbln_##_name##_write,					\
}

RBLN_DEBUGFS_WO(hang);
RBLN_DEBUGFS_WO(chiplet_down);
RBLN_DEBUGFS_WO(memory_error);

void rbln_sim_debugfs_init(struct rbln_sim_device *sdev)
{
	struct rbln_device *rdev = sdev->rdev;
	struct dentry *dir = rbln_device_debugfs_dir(rdev);

	if (!dir)
		return;
	debugfs_create_atomic_t("fail_next_jobs", 0600, dir, &sdev->fail_next_jobs);
	debugfs_create_file("hang", 0200, dir, rdev, &rbln_hang_fops);
	debugfs_create_file("chiplet_down", 0200, dir, rdev, &rbln_chiplet_down_fops);
	debugfs_create_file("memory_error", 0200, dir, rdev, &rbln_memory_error_fops);
}
