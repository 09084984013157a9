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
RBLN_IOCTL_GUARDED(rbln_ioctl_reclaim)
RBLN_IOCTL_GUARDED(rbln_ioctl_reset)
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

static const struct drm_driver rbln_drm_driver = {
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

static const char *const rbln_status_names[] = {
	[DRM_RBLN_STATUS_READY] = "READY",
	[DRM_RBLN_STATUS_BUSY] = "BUSY",
	[DRM_RBLN_STATUS_INIT] = "INIT",
	[DRM_RBLN_STATUS_FAULT] = "FAULT",
	[DRM_RBLN_STATUS_FINISH] = "FINISH",
};

const char *rbln_status_name(enum drm_rbln_status status)
{
	if (status >= ARRAY_SIZE(rbln_status_names))
		return "UNKNOWN";
	return rbln_status_names[status];
}

static const char *const rbln_engine_names[] = {
	[DRM_RBLN_ENGINE_NEURAL_DMA] = "neural_dma",
	[DRM_RBLN_ENGINE_TASK_DMA] = "task_dma",
	[DRM_RBLN_ENGINE_DEVICE_HDMA] = "device_hdma",
	[DRM_RBLN_ENGINE_EXTERNAL_HDMA] = "external_hdma",
};

const char *rbln_engine_name(enum drm_rbln_engine kind)
{
	if (kind >= ARRAY_SIZE(rbln_engine_names))
		return "unknown";
	return rbln_engine_names[kind];
}

u64 rbln_driver_capabilities(void)
{
	return DRM_RBLN_CAP_MEMORY | DRM_RBLN_CAP_DMA | DRM_RBLN_CAP_ACQUIRE | DRM_RBLN_CAP_EVENTS |
	       DRM_RBLN_CAP_SYNCOBJ |
	       (RBLN_HAVE_DRM_ACCEL ? DRM_RBLN_CAP_ACCEL_NODE : 0) |
	       (RBLN_HAVE_DRM_FDINFO ? DRM_RBLN_CAP_FDINFO : 0);
}

u64 rbln_device_capabilities(const struct rbln_device *rdev)
{
	return rbln_driver_capabilities() | rdev->info.capabilities;
}

u64 rbln_device_memory_used(struct rbln_device *rdev)
{
	u64 used = 0;
	unsigned int i;

	for (i = 0; i < rdev->nr_chiplets; i++)
		used += atomic64_read(&rdev->chiplets[i].memory_used);
	return used;
}

u64 rbln_device_memory_placed(struct rbln_device *rdev)
{
	u64 placed = 0;
	unsigned int i;

	for (i = 0; i < rdev->nr_chiplets; i++)
		placed += atomic64_read(&rdev->chiplets[i].memory_placed);
	return placed;
}

unsigned long rbln_chiplet_engine_mask(const struct rbln_chiplet *chiplet)
{
	unsigned long mask = 0;
	unsigned int kind;

	for (kind = 0; kind < DRM_RBLN_ENGINE_COUNT; kind++)
		if (chiplet->engines[kind].present)
			mask |= BIT(kind);
	return mask;
}

u32 rbln_device_utilization(struct rbln_device *rdev)
{
	return rbln_busy_utilization(&rdev->busy);
}

void *rbln_device_hw_priv(struct rbln_device *rdev)
{
	return rdev->hw_priv;
}

/*
 * BUSY is not stored: it is READY while some engine runs a job, derived when
 * read, so jobs do not send a uevent each.
 */
enum drm_rbln_status rbln_device_status(const struct rbln_device *rdev)
{
	enum drm_rbln_status status = atomic_read(&rdev->status);

	if (status == DRM_RBLN_STATUS_READY && READ_ONCE(rdev->busy.active))
		return DRM_RBLN_STATUS_BUSY;
	return status;
}

/* Status changes are announced to udev as a change uevent with RBLN_STATUS. */
void rbln_device_set_status(struct rbln_device *rdev, enum drm_rbln_status status)
{
	char env_status[32];
	char *envp[] = { env_status, NULL };

	if (atomic_xchg(&rdev->status, status) == status)
		return;
	snprintf(env_status, sizeof(env_status), "RBLN_STATUS=%s",
		 rbln_status_name(status));
	kobject_uevent_env(&rdev->parent->kobj, KOBJ_CHANGE, envp);
	if (status == DRM_RBLN_STATUS_FAULT) {
		struct rbln_event ev = { .type = RBLN_GENL_EVENT_FAULT, .device = rdev->info.index };

		rbln_event_send(&ev);
	}
}

static void rbln_chiplets_init(struct rbln_device *rdev)
{
	unsigned int i, kind;

	rdev->nr_chiplets = rdev->info.sku->chiplets;
	for (i = 0; i < rdev->nr_chiplets; i++) {
		struct rbln_chiplet *chiplet = &rdev->chiplets[i];

		chiplet->rdev = rdev;
		chiplet->index = i;
		chiplet->memory_total = div_u64(rdev->info.memory_total, rdev->nr_chiplets);
		atomic64_set(&chiplet->memory_used, 0);
		atomic64_set(&chiplet->memory_placed, 0);
		for (kind = 0; kind < DRM_RBLN_ENGINE_COUNT; kind++) {
			chiplet->engines[kind].kind = kind;
			/* Only chiplet 0 talks to the host. */
			chiplet->engines[kind].present =
				kind != DRM_RBLN_ENGINE_EXTERNAL_HDMA || i == 0;
		}
	}
}

/**
 * rbln_device_create - bring up one NPU found by a backend
 * @parent: the backend's device; the DRM node and sysfs attributes hang off it
 * @info: identity, copied
 * @ops: the backend's hardware operations
 * @hw_priv: backend data, returned by rbln_device_hw_priv()
 *
 * Returns the device or an ERR_PTR.  The memory lives until the last open
 * file is closed; rbln_device_destroy() cuts it off from the hardware.
 */
struct rbln_device *rbln_device_create(struct device *parent,
				       const struct rbln_hw_info *info,
				       const struct rbln_hw_ops *ops,
				       void *hw_priv)
{
	struct rbln_device *rdev;
	int ret;

	if (WARN_ON(!info->sku || info->sku->chiplets > RBLN_MAX_CHIPLETS))
		return ERR_PTR(-EINVAL);
	/* A backend without a job limit would have every SUBMIT refused. */
	if (WARN_ON(!info->job_max_bytes))
		return ERR_PTR(-EINVAL);
	/* Each chiplet's memory must fit its window of device addresses. */
	if (div_u64(info->memory_total, info->sku->chiplets) > RBLN_CHIPLET_WINDOW)
		return ERR_PTR(-EINVAL);

	rdev = devm_drm_dev_alloc(parent, &rbln_drm_driver, struct rbln_device, drm);
	if (IS_ERR(rdev))
		return rdev;

	rdev->parent = parent;
	rdev->hw = ops;
	rdev->hw_priv = hw_priv;
	rdev->info = *info;
	atomic_set(&rdev->status, DRM_RBLN_STATUS_INIT);
	rbln_busy_init(&rdev->busy);
	mutex_init(&rdev->clients_lock);
	mutex_init(&rdev->bos_lock);
	INIT_LIST_HEAD(&rdev->bos);
	INIT_LIST_HEAD(&rdev->clients);
	rdev->owner = NULL;
	rbln_chiplets_init(rdev);
	ret = rbln_mem_init(rdev);
	if (ret)
		return ERR_PTR(ret);
	dev_set_drvdata(parent, rdev);

	ret = rbln_engines_init(rdev);
	if (ret)
		goto err_drvdata;
	ret = rbln_sysfs_init(rdev);
	if (ret)
		goto err_engines;
	ret = rbln_test_point(RBLN_TP_PROBE_REGISTERING) ?: drm_dev_register(&rdev->drm, 0);
	if (ret)
		goto err_sysfs;
	rbln_debugfs_device_init(rdev);
	rbln_device_set_status(rdev, DRM_RBLN_STATUS_READY);
	rbln_event_send(&(struct rbln_event){ .type = RBLN_GENL_EVENT_DEVICE_ADDED,
					      .device = rdev->info.index });
	return rdev;

err_sysfs:
	rbln_sysfs_fini(rdev);
err_engines:
	rbln_engines_fini(rdev);
err_drvdata:
	/* devm frees rdev when the probe fails: nothing may point at it. */
	dev_set_drvdata(parent, NULL);
	return ERR_PTR(ret);
}

/**
 * rbln_device_destroy - the hardware is going away
 * @rdev: the device returned by rbln_device_create()
 *
 * Open files stay valid but every later call on them fails with -ENODEV.
 */
void rbln_device_destroy(struct rbln_device *rdev)
{
	rbln_event_send(&(struct rbln_event){ .type = RBLN_GENL_EVENT_DEVICE_REMOVED,
					      .device = rdev->info.index });
	/* Jobs end with -ENODEV from now on instead of running. */
	WRITE_ONCE(rdev->dying, true);
	rbln_debugfs_device_fini(rdev);
	/* Waits for every ioctl inside the device; none can set a status after this. */
	drm_dev_unplug(&rdev->drm);
	rbln_device_set_status(rdev, DRM_RBLN_STATUS_FINISH);
	/* Jobs on the hardware end now rather than at their timeout. */
	rbln_engines_stop(rdev);
	rbln_engines_fini(rdev);
	rbln_sysfs_fini(rdev);
	dev_set_drvdata(rdev->parent, NULL);
}

static int __init rbln_init(void)
{
	int ret;

	BUILD_BUG_ON(sizeof(struct drm_rbln_get_param) != 24);
	BUILD_BUG_ON(sizeof(struct drm_rbln_device_info) != 208);
	BUILD_BUG_ON(sizeof(struct drm_rbln_bo_create) != 24);
	BUILD_BUG_ON(sizeof(struct drm_rbln_bo_info) != 40);
	BUILD_BUG_ON(sizeof(struct drm_rbln_copy) != 32);
	BUILD_BUG_ON(sizeof(struct drm_rbln_submit) != 88);
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
	return 0;

err_debugfs:
	rbln_debugfs_fini();
	rbln_jobs_fini();
err_events:
	rbln_events_fini();
	return ret;
}

static void __exit rbln_exit(void)
{
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
