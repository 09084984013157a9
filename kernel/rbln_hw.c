// SPDX-License-Identifier: GPL-2.0-only
/*
 * The core's half of the hardware contract (rbln_hw.h): a backend's device
 * becomes an rbln device here and stops being one here, and the backend's
 * reports (errors, lost chiplets) come in here.
 */
#include <linux/fs.h>
#include <linux/mm.h>
#include <drm/drm_drv.h>
#include <drm/drm_print.h>

#include "rbln_compat.h"
#include "rbln_device.h"
#include "rbln_events.h"
#include "rbln_job.h"
#include "rbln_test_point.h"

/* Announced from process context: the status uevent and events allocate. */
static void rbln_device_wedge_work(struct work_struct *work)
{
	struct rbln_device *rdev = container_of(work, struct rbln_device, wedge_work);

	if (READ_ONCE(rdev->dying) || !READ_ONCE(rdev->wedged))
		return;
	drm_err(&rdev->drm, "wedged: the hardware did not come back from a reset (%d); jobs fail until RESET succeeds\n",
		READ_ONCE(rdev->wedge_error));
	rbln_device_set_status(rdev, DRM_RBLN_STATUS_FAULT);
	/*
	 * drm_dev_wedged_event() sends its uevent on the primary node, which a
	 * compute-accel device does not have (7.3 dereferenced the NULL
	 * drm->primary: an oops found by Wedge.*); there the FAULT status
	 * uevent and event above are the announcement.
	 */
	if (rdev->drm.primary)
		rbln_drm_dev_wedged_event(&rdev->drm);
}

void rbln_device_wedge(struct rbln_device *rdev, int error)
{
	WRITE_ONCE(rdev->wedge_error, error);
	WRITE_ONCE(rdev->wedged, true);
	/* The module's queue: system_wq is deprecated on 7.x (it warns at use). */
	rbln_jobs_queue_work(&rdev->wedge_work);
}

int rbln_device_recover(struct rbln_device *rdev)
{
	unsigned int i;
	int ret;

	/* A wedge still being announced is announced before this decides. */
	flush_work(&rdev->wedge_work);
	ret = rbln_hw_device_reset(rdev);
	if (ret) {
		rbln_device_wedge(rdev, ret);
		flush_work(&rdev->wedge_work);
		return ret;
	}
	WRITE_ONCE(rdev->wedged, false);
	for (i = 0; i < rdev->nr_chiplets; i++)
		WRITE_ONCE(rdev->chiplets[i].down, false);
	rbln_device_set_status(rdev, DRM_RBLN_STATUS_READY);
	return 0;
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
			/* The backend says which engines the chiplet has. */
			chiplet->engines[kind].present = rdev->info.engines[i] & BIT(kind);
		}
	}
}

/* Links are symmetric, of a known kind, and only between chiplets that exist. */
static bool rbln_hw_links_valid(const struct rbln_hw_info *info)
{
	unsigned int a, b;

	for (a = 0; a < RBLN_MAX_CHIPLETS; a++)
		for (b = 0; b < RBLN_MAX_CHIPLETS; b++) {
			u8 kind = info->links[a][b];

			if (kind != info->links[b][a] || kind >= RBLN_HW_LINK_KINDS)
				return false;
			if (kind && (a == b || a >= info->sku->chiplets || b >= info->sku->chiplets))
				return false;
		}
	return true;
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
	unsigned int i;
	int ret;

	if (WARN_ON(!info->sku || info->sku->chiplets > RBLN_MAX_CHIPLETS))
		return ERR_PTR(-EINVAL);
	/* A backend without a job limit would have every SUBMIT refused. */
	if (WARN_ON(!info->job_max_bytes))
		return ERR_PTR(-EINVAL);
	/* Every chiplet has an engine, and only engines the UAPI names. */
	for (i = 0; i < info->sku->chiplets; i++)
		if (WARN_ON(!info->engines[i] ||
			    info->engines[i] & ~GENMASK(DRM_RBLN_ENGINE_COUNT - 1, 0)))
			return ERR_PTR(-EINVAL);
	if (WARN_ON(!rbln_hw_links_valid(info)))
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
	if (!rdev->info.pci_vendor_id) {
		rdev->info.pci_vendor_id = DRM_RBLN_PCI_VENDOR_ID;
		rdev->info.pci_device_id = info->sku->pci_device_id;
	}
	atomic_set(&rdev->status, DRM_RBLN_STATUS_INIT);
	rbln_busy_init(&rdev->busy);
	mutex_init(&rdev->clients_lock);
	mutex_init(&rdev->bos_lock);
	INIT_LIST_HEAD(&rdev->bos);
	INIT_LIST_HEAD(&rdev->clients);
	INIT_WORK(&rdev->wedge_work, rbln_device_wedge_work);
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
	/* CPU mappings fault again, and the fault handler sees the device gone: SIGBUS. */
	unmap_mapping_range(rdev->drm.anon_inode->i_mapping, 0, 0, 1);
	rbln_device_set_status(rdev, DRM_RBLN_STATUS_FINISH);
	/* Jobs on the hardware end now rather than at their timeout. */
	rbln_engines_stop(rdev);
	/* No interrupt handler of the backend runs past this point. */
	rbln_hw_sync_irq(rdev);
	rbln_engines_fini(rdev);
	cancel_work_sync(&rdev->wedge_work);
	rbln_sysfs_fini(rdev);
	dev_set_drvdata(rdev->parent, NULL);
}


/* Errors the backend reports (rbln_hw.h). */
void rbln_hw_device_wedged(struct rbln_device *rdev, int error)
{
	rbln_device_wedge(rdev, error);
}

void rbln_hw_memory_error(struct rbln_device *rdev, u32 chiplet)
{
	might_sleep();		/* the uevent and the event allocate */
	drm_info(&rdev->drm, "chiplet %u: uncorrectable memory error\n", chiplet);
	atomic_inc(&rdev->memory_errors);
	rbln_event_send(&(struct rbln_event){ .type = RBLN_GENL_EVENT_MEMORY_ERROR,
					      .device = rdev->info.index,
					      .has = RBLN_EV_CHIPLET, .chiplet = chiplet });
	rbln_device_set_status(rdev, DRM_RBLN_STATUS_FAULT);
}

/*
 * A lost chiplet faults the device (status FAULT: the change uevent and the
 * FAULT event monitors without root follow); its coming back does not clear
 * the fault, only a reset does, as after a memory error.
 */
void rbln_hw_chiplet_lost(struct rbln_device *rdev, u32 chiplet, bool lost)
{
	might_sleep();		/* a loss sends the FAULT uevent */
	if (WARN_ON(chiplet >= rdev->nr_chiplets))
		return;
	if (READ_ONCE(rdev->chiplets[chiplet].down) == lost)
		return;
	WRITE_ONCE(rdev->chiplets[chiplet].down, lost);
	drm_info(&rdev->drm, "chiplet %u: %s\n", chiplet, lost ? "lost" : "back");
	if (lost)
		rbln_device_set_status(rdev, DRM_RBLN_STATUS_FAULT);
}
