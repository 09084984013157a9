/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The hardware-ops boundary.  The core driver (DRM device, UAPI, sysfs,
 * accounting) knows nothing about where a device comes from.  A backend
 * (today the simulator in sim/, later a PCI driver) discovers devices, fills a
 * struct rbln_hw_info, and hands both to rbln_device_create() together with
 * its struct rbln_hw_ops.
 */
#ifndef RBLN_HW_H
#define RBLN_HW_H

#include <linux/types.h>
#include <linux/uuid.h>
#include <drm/rbln_drm.h>

struct device;
struct rbln_device;
struct rbln_sku;

#define RBLN_MAX_CHIPLETS	4
/* Device addresses: chiplet N's memory is the window at N * RBLN_CHIPLET_WINDOW. */
#define RBLN_CHIPLET_WINDOW	(1ULL << 40)

/* Identity of one device, fixed for its lifetime. */
struct rbln_hw_info {
	const struct rbln_sku *sku;
	u32 index;			/* N of /dev/rblnN, unique per host */
	u64 memory_total;		/* bytes, split evenly over chiplets */
	uuid_t uuid;
	char serial[32];
	char pci_bus_id[16];
	int numa_node;
	char firmware_version[32];
	u64 capabilities;		/* backend's DRM_RBLN_CAP_* bits */
};

/* What the core reads from the hardware's sensors. */
struct rbln_sensors {
	int temperature_mc;		/* millidegrees Celsius */
	u32 power_uw;			/* microwatts */
	u32 pstate;			/* 0 fastest .. 15 slowest, shown as "P<n>" */
};

struct rbln_hw_ops {
	/* Fill @s.  Called with the device alive (inside drm_dev_enter). */
	void (*read_sensors)(struct rbln_device *rdev, struct rbln_sensors *s);
};

struct rbln_device *rbln_device_create(struct device *parent,
				       const struct rbln_hw_info *info,
				       const struct rbln_hw_ops *ops,
				       void *hw_priv);
void rbln_device_destroy(struct rbln_device *rdev);
void *rbln_device_hw_priv(struct rbln_device *rdev);

/* Device-wide utilisation in percent over the last sampling window. */
u32 rbln_device_utilization(struct rbln_device *rdev);

#endif /* RBLN_HW_H */
