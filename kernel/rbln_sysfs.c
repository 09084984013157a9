// SPDX-License-Identifier: GPL-2.0-only
/*
 * sysfs: attributes on the device the DRM node hangs off (so udev rules and
 * /sys/class/{accel,drm}/<node>/device/ reach them), and one chipletN/
 * directory per chiplet.  Every attribute is documented in docs/sysfs.md.
 */
#include <linux/device.h>
#include <linux/pci.h>
#include <linux/slab.h>
#include <linux/sysfs.h>
#include <drm/drm_drv.h>

#include "rbln_device.h"

static struct rbln_device *dev_to_rbln(struct device *dev)
{
	return dev_get_drvdata(dev);
}

#define RBLN_INFO_ATTR(_name, _fmt, _expr)					\
static ssize_t _name##_show(struct device *dev, struct device_attribute *attr,	\
			    char *buf)						\
{										\
	const struct rbln_device *rdev = dev_to_rbln(dev);			\
										\
	return sysfs_emit(buf, _fmt "\n", _expr);				\
}										\
static DEVICE_ATTR_RO(_name)

RBLN_INFO_ATTR(index, "%u", rdev->info.index);
RBLN_INFO_ATTR(sku, "%s", rdev->info.sku->key);
RBLN_INFO_ATTR(name, "%s", rdev->info.sku->name);
RBLN_INFO_ATTR(uuid, "%pUb", &rdev->info.uuid);
RBLN_INFO_ATTR(serial, "%s", rdev->info.serial);
RBLN_INFO_ATTR(pci_bus_id, "%s", rdev->info.pci_bus_id);
RBLN_INFO_ATTR(pci_vendor_id, "0x%04x", rdev->info.pci_vendor_id);
RBLN_INFO_ATTR(pci_device_id, "0x%04x", rdev->info.pci_device_id);
RBLN_INFO_ATTR(pci_link_speed_mts, "%u", rdev->info.pci_link_speed_mts);
RBLN_INFO_ATTR(pci_link_width, "%u", rdev->info.pci_link_width);
RBLN_INFO_ATTR(numa_node, "%d", rdev->info.numa_node);
RBLN_INFO_ATTR(firmware_version, "%s", rdev->info.firmware_version);
RBLN_INFO_ATTR(chiplet_count, "%u", rdev->nr_chiplets);
RBLN_INFO_ATTR(memory_total, "%llu", rdev->info.memory_total);
RBLN_INFO_ATTR(capabilities, "0x%llx", rbln_device_capabilities(rdev));
RBLN_INFO_ATTR(status, "%s", rbln_status_name(rbln_device_status(rdev)));
RBLN_INFO_ATTR(status_code, "%d", rbln_device_status(rdev));
RBLN_INFO_ATTR(faults, "%u", (unsigned int)atomic_read(&rdev->faults));
RBLN_INFO_ATTR(memory_errors, "%u", (unsigned int)atomic_read(&rdev->memory_errors));

/* Jobs that timed out on a hung engine, each followed by its engine's reset. */
static ssize_t engine_resets_show(struct device *dev, struct device_attribute *attr, char *buf)
{
	const struct rbln_device *rdev = dev_to_rbln(dev);
	unsigned int i, kind, resets = 0;

	for (i = 0; i < rdev->nr_chiplets; i++)
		for (kind = 0; kind < DRM_RBLN_ENGINE_COUNT; kind++)
			resets += atomic_read(&rdev->chiplets[i].engines[kind].resets);
	return sysfs_emit(buf, "%u\n", resets);
}
static DEVICE_ATTR_RO(engine_resets);

static ssize_t memory_used_show(struct device *dev, struct device_attribute *attr,
				char *buf)
{
	return sysfs_emit(buf, "%llu\n", rbln_device_memory_used(dev_to_rbln(dev)));
}
static DEVICE_ATTR_RO(memory_used);

static ssize_t memory_placed_show(struct device *dev, struct device_attribute *attr,
				  char *buf)
{
	return sysfs_emit(buf, "%llu\n", rbln_device_memory_placed(dev_to_rbln(dev)));
}
static DEVICE_ATTR_RO(memory_placed);

static ssize_t busy_ns_show(struct device *dev, struct device_attribute *attr,
			    char *buf)
{
	return sysfs_emit(buf, "%llu\n", rbln_busy_total_ns(&dev_to_rbln(dev)->busy));
}
static DEVICE_ATTR_RO(busy_ns);

static ssize_t utilization_show(struct device *dev, struct device_attribute *attr,
				char *buf)
{
	return sysfs_emit(buf, "%u\n", rbln_device_utilization(dev_to_rbln(dev)));
}
static DEVICE_ATTR_RO(utilization);

/* Sensors are read from the hardware; a removed device has none. */
static int rbln_read_sensors(struct device *dev, struct rbln_sensors *s)
{
	struct rbln_device *rdev = dev_to_rbln(dev);
	int idx;

	if (!drm_dev_enter(&rdev->drm, &idx))
		return -ENODEV;
	rbln_hw_read_sensors(rdev, s);
	drm_dev_exit(idx);
	return 0;
}

#define RBLN_SENSOR_ATTR(_name, _fmt, _field)					\
static ssize_t _name##_show(struct device *dev, struct device_attribute *attr,	\
			    char *buf)						\
{										\
	struct rbln_sensors s;							\
	int ret = rbln_read_sensors(dev, &s);					\
										\
	return ret ? ret : sysfs_emit(buf, _fmt "\n", s._field);		\
}										\
static DEVICE_ATTR_RO(_name)

RBLN_SENSOR_ATTR(temperature, "%d", temperature_mc);
RBLN_SENSOR_ATTR(power_draw, "%u", power_uw);
RBLN_SENSOR_ATTR(pstate, "P%u", pstate);

static struct attribute *rbln_device_attrs[] = {
	&dev_attr_index.attr,
	&dev_attr_sku.attr,
	&dev_attr_name.attr,
	&dev_attr_uuid.attr,
	&dev_attr_serial.attr,
	&dev_attr_pci_bus_id.attr,
	&dev_attr_pci_vendor_id.attr,
	&dev_attr_pci_device_id.attr,
	&dev_attr_pci_link_speed_mts.attr,
	&dev_attr_pci_link_width.attr,
	&dev_attr_numa_node.attr,
	&dev_attr_firmware_version.attr,
	&dev_attr_chiplet_count.attr,
	&dev_attr_memory_total.attr,
	&dev_attr_memory_used.attr,
	&dev_attr_memory_placed.attr,
	&dev_attr_capabilities.attr,
	&dev_attr_status.attr,
	&dev_attr_status_code.attr,
	&dev_attr_faults.attr,
	&dev_attr_memory_errors.attr,
	&dev_attr_engine_resets.attr,
	&dev_attr_busy_ns.attr,
	&dev_attr_utilization.attr,
	&dev_attr_temperature.attr,
	&dev_attr_power_draw.attr,
	&dev_attr_pstate.attr,
	NULL
};

/* A PCI parent already has numa_node (same meaning); do not shadow it. */
static umode_t rbln_device_attr_visible(struct kobject *kobj,
					struct attribute *attr, int n)
{
	if (attr == &dev_attr_numa_node.attr && dev_is_pci(kobj_to_dev(kobj)))
		return 0;
	return attr->mode;
}

static const struct attribute_group rbln_device_group = {
	.attrs = rbln_device_attrs,
	.is_visible = rbln_device_attr_visible,
};

static const struct attribute_group *rbln_device_groups[] = {
	&rbln_device_group,
	NULL
};

/* chipletN/ */

struct rbln_chiplet_kobj {
	struct kobject kobj;
	struct rbln_chiplet *chiplet;
};

static struct rbln_chiplet *kobj_to_chiplet(struct kobject *kobj)
{
	return container_of(kobj, struct rbln_chiplet_kobj, kobj)->chiplet;
}

static ssize_t chiplet_memory_total_show(struct kobject *kobj,
					 struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%llu\n", kobj_to_chiplet(kobj)->memory_total);
}

static ssize_t chiplet_memory_used_show(struct kobject *kobj,
					struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%lld\n",
			  (s64)atomic64_read(&kobj_to_chiplet(kobj)->memory_used));
}

static ssize_t chiplet_memory_placed_show(struct kobject *kobj,
					  struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%lld\n",
			  (s64)atomic64_read(&kobj_to_chiplet(kobj)->memory_placed));
}

static ssize_t chiplet_engine_resets_show(struct kobject *kobj,
					  struct kobj_attribute *attr, char *buf)
{
	const struct rbln_chiplet *chiplet = kobj_to_chiplet(kobj);
	unsigned int kind, resets = 0;

	for (kind = 0; kind < DRM_RBLN_ENGINE_COUNT; kind++)
		resets += atomic_read(&chiplet->engines[kind].resets);
	return sysfs_emit(buf, "%u\n", resets);
}

static ssize_t chiplet_status_show(struct kobject *kobj, struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%s\n", READ_ONCE(kobj_to_chiplet(kobj)->down) ? "lost" : "ok");
}

static ssize_t chiplet_engines_show(struct kobject *kobj,
				    struct kobj_attribute *attr, char *buf)
{
	const struct rbln_chiplet *chiplet = kobj_to_chiplet(kobj);
	unsigned int kind;
	int len = 0;

	for (kind = 0; kind < DRM_RBLN_ENGINE_COUNT; kind++)
		if (chiplet->engines[kind].present)
			len += sysfs_emit_at(buf, len, "%s%s", len ? " " : "",
					     rbln_engine_name(kind));
	return len + sysfs_emit_at(buf, len, "\n");
}

/*
 * links: the chiplets this one is wired to, as "PEER:KIND" (KIND "d2d",
 * die-to-die) separated by spaces, in chiplet order; an empty line when it
 * has none (a one-die part).  The backend's declaration (rbln_hw_info.links).
 */
static ssize_t chiplet_links_show(struct kobject *kobj, struct kobj_attribute *attr, char *buf)
{
	static const char *const kind_names[RBLN_HW_LINK_KINDS] = {
		[RBLN_HW_LINK_D2D] = "d2d",
	};
	const struct rbln_chiplet *chiplet = kobj_to_chiplet(kobj);
	const struct rbln_device *rdev = chiplet->rdev;
	unsigned int peer;
	int len = 0;

	for (peer = 0; peer < rdev->nr_chiplets; peer++) {
		u8 kind = rdev->info.links[chiplet->index][peer];

		if (kind)
			len += sysfs_emit_at(buf, len, "%s%u:%s", len ? " " : "", peer,
					     kind_names[kind]);
	}
	return len + sysfs_emit_at(buf, len, "\n");
}

/* <engine>_busy_ns: time the engine spent running jobs; present engines only. */
static struct kobj_attribute chiplet_attr_engine_busy[DRM_RBLN_ENGINE_COUNT];

static ssize_t chiplet_engine_busy_show(struct kobject *kobj, struct kobj_attribute *attr,
					char *buf)
{
	unsigned int kind = attr - chiplet_attr_engine_busy;

	return sysfs_emit(buf, "%llu\n",
			  (u64)atomic64_read(&kobj_to_chiplet(kobj)->engines[kind].busy_ns));
}

#define RBLN_ENGINE_BUSY_ATTR(_kind, _name) \
	[_kind] = __ATTR(_name##_busy_ns, 0444, chiplet_engine_busy_show, NULL)

static struct kobj_attribute chiplet_attr_engine_busy[DRM_RBLN_ENGINE_COUNT] = {
	RBLN_ENGINE_BUSY_ATTR(DRM_RBLN_ENGINE_NEURAL_DMA, neural_dma),
	RBLN_ENGINE_BUSY_ATTR(DRM_RBLN_ENGINE_TASK_DMA, task_dma),
	RBLN_ENGINE_BUSY_ATTR(DRM_RBLN_ENGINE_DEVICE_HDMA, device_hdma),
	RBLN_ENGINE_BUSY_ATTR(DRM_RBLN_ENGINE_EXTERNAL_HDMA, external_hdma),
};

static struct attribute *rbln_chiplet_engine_attrs[] = {
	&chiplet_attr_engine_busy[DRM_RBLN_ENGINE_NEURAL_DMA].attr,
	&chiplet_attr_engine_busy[DRM_RBLN_ENGINE_TASK_DMA].attr,
	&chiplet_attr_engine_busy[DRM_RBLN_ENGINE_DEVICE_HDMA].attr,
	&chiplet_attr_engine_busy[DRM_RBLN_ENGINE_EXTERNAL_HDMA].attr,
	NULL
};

static umode_t rbln_chiplet_engine_visible(struct kobject *kobj, struct attribute *attr, int n)
{
	return kobj_to_chiplet(kobj)->engines[n].present ? attr->mode : 0;
}

static const struct attribute_group rbln_chiplet_engine_group = {
	.attrs = rbln_chiplet_engine_attrs,
	.is_visible = rbln_chiplet_engine_visible,
};

static struct kobj_attribute chiplet_attr_memory_total =
	__ATTR(memory_total, 0444, chiplet_memory_total_show, NULL);
static struct kobj_attribute chiplet_attr_memory_used =
	__ATTR(memory_used, 0444, chiplet_memory_used_show, NULL);
static struct kobj_attribute chiplet_attr_memory_placed =
	__ATTR(memory_placed, 0444, chiplet_memory_placed_show, NULL);
static struct kobj_attribute chiplet_attr_engine_resets =
	__ATTR(engine_resets, 0444, chiplet_engine_resets_show, NULL);
static struct kobj_attribute chiplet_attr_engines =
	__ATTR(engines, 0444, chiplet_engines_show, NULL);
static struct kobj_attribute chiplet_attr_status =
	__ATTR(status, 0444, chiplet_status_show, NULL);
static struct kobj_attribute chiplet_attr_links =
	__ATTR(links, 0444, chiplet_links_show, NULL);

static struct attribute *rbln_chiplet_attrs[] = {
	&chiplet_attr_memory_total.attr,
	&chiplet_attr_memory_used.attr,
	&chiplet_attr_memory_placed.attr,
	&chiplet_attr_engines.attr,
	&chiplet_attr_engine_resets.attr,
	&chiplet_attr_status.attr,
	&chiplet_attr_links.attr,
	NULL
};
static const struct attribute_group rbln_chiplet_group = {
	.attrs = rbln_chiplet_attrs,
};

static const struct attribute_group *rbln_chiplet_groups[] = {
	&rbln_chiplet_group,
	&rbln_chiplet_engine_group,
	NULL
};

static void rbln_chiplet_kobj_release(struct kobject *kobj)
{
	kfree(container_of(kobj, struct rbln_chiplet_kobj, kobj));
}

static struct kobj_type rbln_chiplet_ktype = {
	.release = rbln_chiplet_kobj_release,
	.sysfs_ops = &kobj_sysfs_ops,
	.default_groups = rbln_chiplet_groups,
};

static int rbln_chiplet_sysfs_add(struct rbln_chiplet *chiplet)
{
	struct rbln_chiplet_kobj *ck;
	int ret;

	ck = kzalloc(sizeof(*ck), GFP_KERNEL);
	if (!ck)
		return -ENOMEM;
	ck->chiplet = chiplet;
	ret = kobject_init_and_add(&ck->kobj, &rbln_chiplet_ktype,
				   &chiplet->rdev->parent->kobj, "chiplet%u",
				   chiplet->index);
	if (ret) {
		kobject_put(&ck->kobj);
		return ret;
	}
	chiplet->kobj = &ck->kobj;
	return 0;
}

static void rbln_chiplet_sysfs_del(struct rbln_chiplet *chiplet)
{
	if (!chiplet->kobj)
		return;
	kobject_del(chiplet->kobj);
	kobject_put(chiplet->kobj);
	chiplet->kobj = NULL;
}

/* Must run before the DRM node is registered: udev rules read these. */
int rbln_sysfs_init(struct rbln_device *rdev)
{
	unsigned int i;
	int ret;

	ret = device_add_groups(rdev->parent, rbln_device_groups);
	if (ret)
		return ret;
	for (i = 0; i < rdev->nr_chiplets; i++) {
		ret = rbln_chiplet_sysfs_add(&rdev->chiplets[i]);
		if (ret) {
			rbln_sysfs_fini(rdev);
			return ret;
		}
	}
	return 0;
}

void rbln_sysfs_fini(struct rbln_device *rdev)
{
	unsigned int i;

	for (i = 0; i < rdev->nr_chiplets; i++)
		rbln_chiplet_sysfs_del(&rdev->chiplets[i]);
	device_remove_groups(rdev->parent, rbln_device_groups);
}
