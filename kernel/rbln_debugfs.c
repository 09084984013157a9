// SPDX-License-Identifier: GPL-2.0-only
/*
 * Fault injection, in /sys/kernel/debug/rbln/rbln<index>/:
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

#include "rbln_device.h"
#include "rbln_events.h"
#include "rbln_job.h"

static struct dentry *rbln_debugfs_root;

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

int rbln_debugfs_parse_hang(const struct rbln_device *rdev, const char *cmd,
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

int rbln_debugfs_parse_chiplet_down(const struct rbln_device *rdev, const char *cmd,
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
	struct rbln_engine *engine;
	char buf[64];
	int ret;

	ret = rbln_read_command(ubuf, len, buf, sizeof(buf));
	if (!ret)
		ret = rbln_debugfs_parse_hang(rdev, buf, &chiplet, &kind, &on);
	if (ret)
		return ret;
	engine = &rdev->chiplets[chiplet].engines[kind];
	WRITE_ONCE(engine->hung, on);
	wake_up_all(&engine->wait);
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
		ret = rbln_debugfs_parse_chiplet_down(rdev, buf, &chiplet, &down);
	if (ret)
		return ret;
	WRITE_ONCE(rdev->chiplets[chiplet].down, down);
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
	drm_info(&rdev->drm, "chiplet %u: uncorrectable memory error (injected)\n", chiplet);
	rbln_event_send(&(struct rbln_event){ .type = RBLN_GENL_EVENT_MEMORY_ERROR,
					      .device = rdev->info.index,
					      .has = RBLN_EV_CHIPLET, .chiplet = chiplet });
	rbln_device_set_status(rdev, DRM_RBLN_STATUS_FAULT);
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

void rbln_debugfs_device_init(struct rbln_device *rdev)
{
	char name[32];

	snprintf(name, sizeof(name), "rbln%u", rdev->info.index);
	rdev->debugfs = debugfs_create_dir(name, rbln_debugfs_root);
	debugfs_create_atomic_t("fail_next_jobs", 0600, rdev->debugfs, &rdev->fail_next_jobs);
	debugfs_create_file("hang", 0200, rdev->debugfs, rdev, &rbln_hang_fops);
	debugfs_create_file("chiplet_down", 0200, rdev->debugfs, rdev, &rbln_chiplet_down_fops);
	debugfs_create_file("memory_error", 0200, rdev->debugfs, rdev, &rbln_memory_error_fops);
}

void rbln_debugfs_device_fini(struct rbln_device *rdev)
{
	debugfs_remove_recursive(rdev->debugfs);
	rdev->debugfs = NULL;
}

void rbln_debugfs_init(void)
{
	rbln_debugfs_root = debugfs_create_dir("rbln", NULL);
}

void rbln_debugfs_fini(void)
{
	debugfs_remove_recursive(rbln_debugfs_root);
}
