// SPDX-License-Identifier: GPL-2.0-only
/*
 * rbln: DRM driver for RBLN-style NPUs.
 *
 * One DRM device per NPU package.  On kernels with DRM accel the device is a
 * compute-accel node (/dev/accel/accelN); elsewhere it is a render node.  The
 * choice is made by probing the kernel (rbln_compat.h), not by version.
 */
#include <linux/module.h>
#include <drm/drm_drv.h>
#include <drm/drm_file.h>
#include <drm/drm_gem.h>
#include <drm/drm_ioctl.h>
#include <drm/drm_prime.h>

#include "rbln_client.h"
#include "rbln_compat.h"
#include "rbln_device.h"
#include "rbln_events.h"
#include "rbln_gem.h"
#include "rbln_hw.h"
#include "rbln_job.h"
#include "rbln_test_point.h"
#include "rbln_times.h"

#if IS_ENABLED(CONFIG_DRM_RBLN_KUNIT_TEST)
int (*rbln_test_point_hook)(enum rbln_test_point_id point);
#endif

/*
 * Every rbln ioctl goes through a check that the calling client was not
 * reclaimed: a revoked file gets -ENODEV from then on.
 */
static int rbln_ioctl_revoked(struct drm_file *file)
{
	struct rbln_client *client = file->driver_priv;

	return READ_ONCE(client->revoked) ? -ENODEV : 0;
}

#define RBLN_IOCTL_CHECKED(func)							\
static int func##_checked(struct drm_device *drm, void *data, struct drm_file *file) \
{										\
	return rbln_ioctl_revoked(file) ?: func(drm, data, file);		\
}

/*
 * Those that touch the device also run entirely inside drm_dev_enter(), so
 * that removal waits for them and they never see a half-removed device.
 * (SUBMIT enters once its arguments are copied in; WAIT and LIST_CLIENTS
 * touch no hardware and may sleep on user space or a long timeout.)
 */
#define RBLN_IOCTL_GUARDED(func)							\
static int func##_checked(struct drm_device *drm, void *data, struct drm_file *file) \
{										\
	int ret, idx;								\
										\
	ret = rbln_ioctl_revoked(file);						\
	if (ret)								\
		return ret;							\
	if (!drm_dev_enter(drm, &idx))						\
		return -ENODEV;							\
	ret = func(drm, data, file);						\
	drm_dev_exit(idx);							\
	return ret;								\
}
RBLN_IOCTL_GUARDED(rbln_ioctl_get_param)
RBLN_IOCTL_GUARDED(rbln_ioctl_device_info)
RBLN_IOCTL_GUARDED(rbln_ioctl_bo_create)
RBLN_IOCTL_GUARDED(rbln_ioctl_bo_info)
RBLN_IOCTL_CHECKED(rbln_ioctl_submit)
RBLN_IOCTL_CHECKED(rbln_ioctl_submit_batch)
RBLN_IOCTL_CHECKED(rbln_ioctl_wait)
RBLN_IOCTL_GUARDED(rbln_ioctl_client_usage)
RBLN_IOCTL_GUARDED(rbln_ioctl_acquire)
RBLN_IOCTL_GUARDED(rbln_ioctl_release)
RBLN_IOCTL_CHECKED(rbln_ioctl_list_clients)
/* They enter the device themselves, not while draining others' jobs. */
RBLN_IOCTL_CHECKED(rbln_ioctl_reclaim)
RBLN_IOCTL_CHECKED(rbln_ioctl_reset)
RBLN_IOCTL_GUARDED(rbln_ioctl_device_status)
RBLN_IOCTL_CHECKED(rbln_ioctl_job_times)

#define RBLN_IOCTL_DEF(name, func) \
	DRM_IOCTL_DEF_DRV(name, func##_checked, DRM_RENDER_ALLOW)

static const struct drm_ioctl_desc rbln_ioctls[] = {
	RBLN_IOCTL_DEF(RBLN_GET_PARAM, rbln_ioctl_get_param),
	RBLN_IOCTL_DEF(RBLN_DEVICE_INFO, rbln_ioctl_device_info),
	RBLN_IOCTL_DEF(RBLN_BO_CREATE, rbln_ioctl_bo_create),
	RBLN_IOCTL_DEF(RBLN_BO_INFO, rbln_ioctl_bo_info),
	RBLN_IOCTL_DEF(RBLN_SUBMIT, rbln_ioctl_submit),
	RBLN_IOCTL_DEF(RBLN_WAIT, rbln_ioctl_wait),
	RBLN_IOCTL_DEF(RBLN_CLIENT_USAGE, rbln_ioctl_client_usage),
	RBLN_IOCTL_DEF(RBLN_ACQUIRE, rbln_ioctl_acquire),
	RBLN_IOCTL_DEF(RBLN_RELEASE, rbln_ioctl_release),
	RBLN_IOCTL_DEF(RBLN_LIST_CLIENTS, rbln_ioctl_list_clients),
	RBLN_IOCTL_DEF(RBLN_RECLAIM, rbln_ioctl_reclaim),
	RBLN_IOCTL_DEF(RBLN_RESET, rbln_ioctl_reset),
	RBLN_IOCTL_DEF(RBLN_DEVICE_STATUS, rbln_ioctl_device_status),
	RBLN_IOCTL_DEF(RBLN_SUBMIT_BATCH, rbln_ioctl_submit_batch),
	RBLN_IOCTL_DEF(RBLN_JOB_TIMES, rbln_ioctl_job_times),
};

/* Other files stop seeing a client before the DRM core frees its handles. */
static int rbln_release(struct inode *inode, struct file *filp)
{
	struct drm_file *file = filp->private_data;

	rbln_client_unlist(file->driver_priv);
	return drm_release(inode, filp);
}

/* The DRM core's file operations, with release wrapped (Kbuild: -Wno-override-init). */
static const struct file_operations rbln_fops = {
	.owner = THIS_MODULE,
#if RBLN_HAVE_DRM_ACCEL
	DRM_ACCEL_FOPS,
#else
	DRM_GEM_FOPS,
#endif
	.release = rbln_release,
#if RBLN_HAVE_DRM_FDINFO
	.show_fdinfo = drm_show_fdinfo,
#endif
};

#if RBLN_HAVE_DRM_ACCEL
#define RBLN_NODE_FEATURES	DRIVER_COMPUTE_ACCEL
#else
#define RBLN_NODE_FEATURES	DRIVER_RENDER
#endif

const struct drm_driver rbln_drm_driver = {
	.driver_features = DRIVER_GEM | DRIVER_SYNCOBJ | RBLN_DRIVER_SYNCOBJ_TIMELINE |
			   RBLN_NODE_FEATURES,
	.ioctls = rbln_ioctls,
	.num_ioctls = ARRAY_SIZE(rbln_ioctls),
	.fops = &rbln_fops,
	.open = rbln_client_open,
	.postclose = rbln_client_close,
#if RBLN_HAVE_DRM_FDINFO
	.show_fdinfo = rbln_show_fdinfo,
#endif
	.gem_prime_import_sg_table = rbln_gem_prime_import_sg_table,
	RBLN_DRM_DRIVER_PRIME_HOOKS
	RBLN_DRM_DRIVER_GEM_PRIME_MMAP
	.name = "rbln",
	.desc = "RBLN NPU",
	RBLN_DRM_DRIVER_DATE("20261129")
	.major = 1,
	.minor = DRM_RBLN_UAPI_VERSION,
};

static int __init rbln_init(void)
{
	int ret;

	BUILD_BUG_ON(sizeof(struct drm_rbln_get_param) != 24);
	BUILD_BUG_ON(sizeof(struct drm_rbln_device_info) != 216);
	BUILD_BUG_ON(sizeof(struct drm_rbln_bo_create) != 24);
	BUILD_BUG_ON(sizeof(struct drm_rbln_bo_info) != 40);
	BUILD_BUG_ON(sizeof(struct drm_rbln_copy) != 32);
	BUILD_BUG_ON(sizeof(struct drm_rbln_submit) != 120);
	BUILD_BUG_ON(sizeof(struct drm_rbln_sync) != 16);
	BUILD_BUG_ON(sizeof(struct drm_rbln_wait) != 24);
	BUILD_BUG_ON(sizeof(struct drm_rbln_client_usage) != 72);
	BUILD_BUG_ON(sizeof(struct drm_rbln_acquire) != 8);
	BUILD_BUG_ON(sizeof(struct drm_rbln_client) != 56);
	BUILD_BUG_ON(sizeof(struct drm_rbln_list_clients) != 24);
	BUILD_BUG_ON(sizeof(struct drm_rbln_reclaim) != 24);
	BUILD_BUG_ON(sizeof(struct drm_rbln_reset) != 8);
	BUILD_BUG_ON(sizeof(struct drm_rbln_device_status) != 64);

	ret = rbln_events_init();
	if (ret)
		return ret;
	ret = rbln_jobs_init();
	if (ret)
		goto err_events;
	rbln_debugfs_init();
	ret = rbln_sim_init();
	if (ret)
		goto err_debugfs;
	ret = rbln_pci_init();
	if (ret)
		goto err_sim;
	return 0;

err_sim:
	rbln_sim_exit();
err_debugfs:
	rbln_debugfs_fini();
	rbln_jobs_fini();
err_events:
	rbln_events_fini();
	return ret;
}

static void __exit rbln_exit(void)
{
	rbln_pci_exit();
	rbln_sim_exit();
	rbln_debugfs_fini();
	rbln_jobs_fini();
	rbln_events_fini();
}

module_init(rbln_init);
module_exit(rbln_exit);

MODULE_DESCRIPTION("DRM driver for RBLN NPUs, with a simulation backend");
MODULE_AUTHOR("rbln-devmgr developers");
MODULE_LICENSE("GPL");
MODULE_VERSION(RBLN_DRIVER_VERSION);
RBLN_IMPORT_NS_DMA_BUF;	/* imported buffers are reached through dma_buf_vmap() */
