// SPDX-License-Identifier: GPL-2.0-only
/*
 * debugfs: /sys/kernel/debug/rbln/rbln<index>/, one directory per device.
 * The core puts nothing of its own there yet; backends add their files
 * (the simulator's fault injection, see sim/rbln_sim_debugfs.c).
 */
#include <linux/debugfs.h>
#include <linux/kernel.h>

#include "rbln_device.h"

static struct dentry *rbln_debugfs_root;

void rbln_debugfs_device_init(struct rbln_device *rdev)
{
	char name[32];

	snprintf(name, sizeof(name), "rbln%u", rdev->info.index);
	rdev->debugfs = debugfs_create_dir(name, rbln_debugfs_root);
}

void rbln_debugfs_device_fini(struct rbln_device *rdev)
{
	debugfs_remove_recursive(rdev->debugfs);
	rdev->debugfs = NULL;
}

struct dentry *rbln_device_debugfs_dir(struct rbln_device *rdev)
{
	return IS_ERR_OR_NULL(rdev->debugfs) ? NULL : rdev->debugfs;
}

void rbln_debugfs_init(void)
{
	rbln_debugfs_root = debugfs_create_dir("rbln", NULL);
}

void rbln_debugfs_fini(void)
{
	debugfs_remove_recursive(rbln_debugfs_root);
}
