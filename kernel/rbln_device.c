// SPDX-License-Identifier: GPL-2.0-only
/*
 * Device helpers: status and its announcement, names, capabilities, memory
 * figures, and what a backend may read of a device (rbln_hw.h).
 */
#include <linux/device.h>
#include <drm/drm_drv.h>

#include "rbln_compat.h"
#include "rbln_device.h"
#include "rbln_events.h"

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

		atomic_inc(&rdev->faults);
		rbln_event_send(&ev);
	}
}

const struct rbln_hw_info *rbln_device_info(const struct rbln_device *rdev)
{
	return &rdev->info;
}

unsigned int rbln_device_chiplets(const struct rbln_device *rdev)
{
	return rdev->nr_chiplets;
}

bool rbln_device_has_engine(const struct rbln_device *rdev, u32 chiplet,
			    enum drm_rbln_engine kind)
{
	return chiplet < rdev->nr_chiplets && kind < DRM_RBLN_ENGINE_COUNT &&
	       rdev->chiplets[chiplet].engines[kind].present;
}

void rbln_device_get(struct rbln_device *rdev)
{
	drm_dev_get(&rdev->drm);
}

void rbln_device_put(struct rbln_device *rdev)
{
	drm_dev_put(&rdev->drm);
}
