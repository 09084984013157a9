// SPDX-License-Identifier: GPL-2.0-only
/* GET_PARAM and DEVICE_INFO: what user space asks before anything else. */
#include <linux/string.h>
#include <drm/drm_drv.h>
#include <drm/drm_file.h>

#include "rbln_device.h"

static bool rbln_param_is_per_chiplet(u32 param)
{
	return param == DRM_RBLN_PARAM_MEMORY_TOTAL ||
	       param == DRM_RBLN_PARAM_MEMORY_USED ||
	       param == DRM_RBLN_PARAM_MEMORY_PLACED ||
	       param == DRM_RBLN_PARAM_ENGINE_MASK;
}

static bool rbln_param_is_device_wide(u32 param)
{
	return param != DRM_RBLN_PARAM_ENGINE_MASK;
}

static int rbln_chiplet_param(struct rbln_device *rdev, u32 param,
			      const struct rbln_chiplet *chiplet, u64 *value)
{
	switch (param) {
	case DRM_RBLN_PARAM_MEMORY_TOTAL:
		*value = chiplet->memory_total;
		return 0;
	case DRM_RBLN_PARAM_MEMORY_USED:
		*value = atomic64_read(&chiplet->memory_used);
		return 0;
	case DRM_RBLN_PARAM_MEMORY_PLACED:
		*value = atomic64_read(&chiplet->memory_placed);
		return 0;
	case DRM_RBLN_PARAM_ENGINE_MASK:
		*value = rbln_chiplet_engine_mask(chiplet);
		return 0;
	}
	return -EINVAL;
}

static int rbln_device_param(struct rbln_device *rdev, u32 param, u64 *value)
{
	switch (param) {
	case DRM_RBLN_PARAM_UAPI_VERSION:
		*value = DRM_RBLN_UAPI_VERSION;
		return 0;
	case DRM_RBLN_PARAM_UAPI_COMPAT_VERSION:
		*value = DRM_RBLN_UAPI_COMPAT_VERSION;
		return 0;
	case DRM_RBLN_PARAM_DEVICE_INDEX:
		*value = rdev->info.index;
		return 0;
	case DRM_RBLN_PARAM_SKU:
		*value = rdev->info.sku->id;
		return 0;
	case DRM_RBLN_PARAM_PCI_DEVICE_ID:
		*value = rdev->info.pci_device_id;
		return 0;
	case DRM_RBLN_PARAM_CHIPLET_COUNT:
		*value = rdev->nr_chiplets;
		return 0;
	case DRM_RBLN_PARAM_CAPABILITIES:
		*value = rbln_device_capabilities(rdev);
		return 0;
	case DRM_RBLN_PARAM_STATUS:
		*value = rbln_device_status(rdev);
		return 0;
	case DRM_RBLN_PARAM_MEMORY_TOTAL:
		*value = rdev->info.memory_total;
		return 0;
	case DRM_RBLN_PARAM_MEMORY_USED:
		*value = rbln_device_memory_used(rdev);
		return 0;
	case DRM_RBLN_PARAM_MEMORY_PLACED:
		*value = rbln_device_memory_placed(rdev);
		return 0;
	case DRM_RBLN_PARAM_BUSY_NS:
		*value = rbln_busy_total_ns(&rdev->busy);
		return 0;
	case DRM_RBLN_PARAM_JOB_MAX_BYTES:
		*value = rdev->info.job_max_bytes;
		return 0;
	}
	return -EINVAL;
}

int rbln_ioctl_get_param(struct drm_device *drm, void *data, struct drm_file *file)
{
	struct rbln_device *rdev = to_rbln_device(drm);
	struct drm_rbln_get_param *args = data;
	bool per_chiplet = args->flags & DRM_RBLN_GET_PARAM_CHIPLET;
	u64 value;
	int ret;

	if (args->flags & ~DRM_RBLN_GET_PARAM_CHIPLET || args->reserved)
		return -EINVAL;

	if (per_chiplet) {
		if (!rbln_param_is_per_chiplet(args->param) ||
		    args->chiplet >= rdev->nr_chiplets)
			return -EINVAL;
		ret = rbln_chiplet_param(rdev, args->param,
					 &rdev->chiplets[args->chiplet], &value);
	} else {
		if (args->chiplet || !rbln_param_is_device_wide(args->param))
			return -EINVAL;
		ret = rbln_device_param(rdev, args->param, &value);
	}
	if (!ret)
		args->value = value;
	return ret;
}

int rbln_ioctl_device_info(struct drm_device *drm, void *data, struct drm_file *file)
{
	struct rbln_device *rdev = to_rbln_device(drm);
	const struct rbln_hw_info *info = &rdev->info;
	struct drm_rbln_device_info *args = data;

	if (args->flags || args->reserved0)
		return -EINVAL;

	memset(args, 0, sizeof(*args));
	args->index = info->index;
	args->sku = info->sku->id;
	args->pci_vendor_id = info->pci_vendor_id;
	args->pci_device_id = info->pci_device_id;
	args->chiplet_count = rdev->nr_chiplets;
	args->numa_node = info->numa_node;
	args->uapi_version = DRM_RBLN_UAPI_VERSION;
	args->memory_total = info->memory_total;
	args->capabilities = rbln_device_capabilities(rdev);
	export_uuid(args->uuid, &info->uuid);
	strscpy(args->name, info->sku->name, sizeof(args->name));
	strscpy(args->serial, info->serial, sizeof(args->serial));
	strscpy(args->pci_bus_id, info->pci_bus_id, sizeof(args->pci_bus_id));
	strscpy(args->firmware_version, info->firmware_version,
		sizeof(args->firmware_version));
	strscpy(args->driver_version, RBLN_DRIVER_VERSION, sizeof(args->driver_version));
	args->pci_link_speed_mts = info->pci_link_speed_mts;
	args->pci_link_width = info->pci_link_width;
	return 0;
}

int rbln_ioctl_device_status(struct drm_device *drm, void *data, struct drm_file *file)
{
	struct rbln_device *rdev = to_rbln_device(drm);
	struct drm_rbln_device_status *args = data;
	struct rbln_sensors sensors;
	int idx;

	if (args->flags || args->reserved)
		return -EINVAL;
	/* The hardware may only be asked while the device is alive. */
	if (!drm_dev_enter(drm, &idx))
		return -ENODEV;
	rbln_hw_read_sensors(rdev, &sensors);
	drm_dev_exit(idx);
	memset(args, 0, sizeof(*args));
	args->status = rbln_device_status(rdev);
	args->temperature_mc = sensors.temperature_mc;
	args->utilization = rbln_device_utilization(rdev);
	args->power_uw = sensors.power_uw;
	args->pstate = sensors.pstate;
	args->memory_total = rdev->info.memory_total;
	args->memory_used = rbln_device_memory_used(rdev);
	args->memory_placed = rbln_device_memory_placed(rdev);
	args->busy_ns = rbln_busy_total_ns(&rdev->busy);
	return 0;
}
