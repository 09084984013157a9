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
	unsigned int chiplet, kind, on = 1;
	char buf[64], name[32];
	struct rbln_engine *engine;
	int n, ret;

	ret = rbln_read_command(ubuf, len, buf, sizeof(buf));
	if (ret)
		return ret;
	n = sscanf(buf, "%u %31s %u", &chiplet, name, &on);
	if (n < 2 || chiplet >= rdev->nr_chiplets || rbln_parse_engine(name, &kind) || on > 1)
		return -EINVAL;
	engine = &rdev->chiplets[chiplet].engines[kind];
	if (!engine->present)
		return -EINVAL;
	WRITE_ONCE(engine->hung, on);
	wake_up_all(&engine->wait);
	return len;
}

static ssize_t rbln_chiplet_down_write(struct file *f, const char __user *ubuf, size_t len,
				       loff_t *pos)
{
	struct rbln_device *rdev = f->private_data;
	unsigned int chiplet, down = 1;
	char buf[32];
	int ret;

	ret = rbln_read_command(ubuf, len, buf, sizeof(buf));
	if (ret)
		return ret;
	if (sscanf(buf, "%u %u", &chiplet, &down) < 1 || chiplet >= rdev->nr_chiplets || down > 1)
		return -EINVAL;
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
	if (kstrtouint(strim(buf), 0, &chiplet) || chiplet >= rdev->nr_chiplets)
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
