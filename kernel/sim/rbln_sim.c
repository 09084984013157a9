// SPDX-License-Identifier: GPL-2.0-only
/*
 * Simulated NPUs on a bus of their own, modelled on netdevsim:
 *
 *   modprobe rbln sim_devices=atom,rebel100          # ids 0 and 1
 *   echo "2 rebel100" > /sys/bus/rbln_sim/new_device  # ID SKU [MEMORY_MIB]
 *   echo 2 > /sys/bus/rbln_sim/del_device
 *
 * Each simulated device binds to the "rbln" driver on that bus, whose probe
 * hands it to the core through rbln_device_create().  A PCI backend would do
 * the same from a pci_driver.
 */
#include <linux/dma-mapping.h>
#include <linux/kernel.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/sizes.h>
#include <linux/string.h>

#include <drm/drm_drv.h>

#include "../rbln_compat.h"
#include "../rbln_sku.h"
#include "../rbln_test_point.h"
#include "rbln_sim.h"

#define RBLN_SIM_MAX_ID		254	/* the id is its bus id's bus number; PCI NPUs start at 256 */

static char *sim_devices = "";
module_param(sim_devices, charp, 0444);
MODULE_PARM_DESC(sim_devices,
	"Simulated NPUs created at load, comma-separated SKUs with ids 0, 1, ...: "
	"atom, atom-max, rebel100 (e.g. sim_devices=atom,rebel100)");

bool rbln_sim_dma;
module_param_named(sim_dma, rbln_sim_dma, bool, 0644);
MODULE_PARM_DESC(sim_dma,
	"New simulated NPUs take their jobs' buffers as DMA addresses (mapped through the DMA API "
	"for the simulated device, as a PCI backend would), not as CPU addresses");

static unsigned int sim_memory_mib;
module_param(sim_memory_mib, uint, 0644);
MODULE_PARM_DESC(sim_memory_mib,
	"Memory of each new simulated NPU in MiB (0: the product's nominal memory)");

static DEFINE_MUTEX(rbln_sim_lock);	/* protects rbln_sim_list */
static LIST_HEAD(rbln_sim_list);

static struct bus_type rbln_sim_bus = {
	.name = "rbln_sim",
	.dev_name = "rbln_sim",
};

static struct rbln_sim_device *to_sim(struct device *dev)
{
	return container_of(dev, struct rbln_sim_device, dev);
}

static int rbln_sim_probe(struct device *dev)
{
	struct rbln_sim_device *sdev = to_sim(dev);
	struct rbln_hw_info info;
	struct rbln_device *rdev;

	rbln_sim_fill_info(sdev, &info);
	/* No bus DMA ops: the DMA API maps directly, bus address = physical address. */
	if (READ_ONCE(rbln_sim_dma)) {
		dev->dma_mask = &dev->coherent_dma_mask;
		if (dma_set_mask_and_coherent(dev, DMA_BIT_MASK(64)))
			return -EIO;
		info.dma_dev = dev;
	}
	rbln_sim_engines_init(sdev);
	rdev = rbln_device_create(dev, &info, &rbln_sim_hw_ops, sdev);
	if (IS_ERR(rdev))
		return PTR_ERR(rdev);
	sdev->rdev = rdev;
	rbln_sim_debugfs_init(sdev);
	return 0;
}

static int rbln_sim_remove(struct device *dev)
{
	struct rbln_sim_device *sdev = to_sim(dev);

	rbln_device_destroy(sdev->rdev);
	rbln_sim_engines_fini(sdev);
	sdev->rdev = NULL;
	return 0;
}

static struct device_driver rbln_sim_driver = {
	.name = "rbln",
	.bus = &rbln_sim_bus,
	.owner = THIS_MODULE,
	.probe = rbln_sim_probe,
	.remove = rbln_sim_remove,
	.suppress_bind_attrs = true,	/* devices come and go through new_device/del_device */
};

static void rbln_sim_dev_release(struct device *dev)
{
	kfree(to_sim(dev));
}

static struct rbln_sim_device *rbln_sim_find(unsigned int id)
{
	struct rbln_sim_device *sdev;

	list_for_each_entry(sdev, &rbln_sim_list, list)
		if (sdev->id == id)
			return sdev;
	return NULL;
}

static int rbln_sim_add(unsigned int id, const struct rbln_sku *sku, u64 memory)
{
	struct rbln_sim_device *sdev;
	int ret;

	lockdep_assert_held(&rbln_sim_lock);
	if (id > RBLN_SIM_MAX_ID) {
		pr_err("rbln_sim: device id %u out of range 0..%u\n", id, RBLN_SIM_MAX_ID);
		return -EINVAL;
	}
	if (rbln_sim_find(id)) {
		pr_err("rbln_sim: device id %u already exists\n", id);
		return -EEXIST;
	}

	sdev = kzalloc(sizeof(*sdev), GFP_KERNEL);
	if (!sdev)
		return -ENOMEM;
	sdev->id = id;
	sdev->sku = sku;
	sdev->memory = memory;
	sdev->dev.bus = &rbln_sim_bus;
	sdev->dev.id = id;
	sdev->dev.release = rbln_sim_dev_release;
	/* The simulated NPU reaches all of host memory, as the real one does over PCIe. */
	device_initialize(&sdev->dev);
	ret = dma_coerce_mask_and_coherent(&sdev->dev, DMA_BIT_MASK(64));
	if (!ret)
		ret = device_add(&sdev->dev);
	if (ret) {
		put_device(&sdev->dev);
		return ret;
	}
	if (!sdev->rdev) {
		/* The driver did not bind: probe failed and said why. */
		device_unregister(&sdev->dev);
		return -EIO;
	}
	list_add_tail(&sdev->list, &rbln_sim_list);
	return 0;
}

static void rbln_sim_del(struct rbln_sim_device *sdev)
{
	lockdep_assert_held(&rbln_sim_lock);
	list_del(&sdev->list);
	device_unregister(&sdev->dev);
}

static u64 rbln_sim_memory(const struct rbln_sku *sku, unsigned int mib)
{
	return mib ? (u64)mib * SZ_1M : sku->memory;
}

/*
 * Parses "ID SKU [MEMORY_MIB]"; without MEMORY_MIB the device gets
 * @default_mib (0: the product's nominal memory).  Says what is wrong.
 */
int rbln_sim_parse_spec(const char *buf, unsigned int default_mib, struct rbln_sim_spec *spec)
{
	unsigned int mib = default_mib;
	int argc, ret = -EINVAL;
	char **argv;

	argv = argv_split(GFP_KERNEL, buf, &argc);
	if (!argv)
		return -ENOMEM;
	if (argc < 2 || argc > 3 || kstrtouint(argv[0], 10, &spec->id) ||
	    (argc == 3 && kstrtouint(argv[2], 10, &mib))) {
		pr_err("rbln_sim: new_device: expected \"ID SKU [MEMORY_MIB]\" with decimal numbers, "
		       "e.g. \"0 rebel100\" or \"1 atom 64\"\n");
		goto out;
	}
	spec->sku = rbln_sku_by_key(argv[1]);
	if (!spec->sku) {
		pr_err("rbln_sim: new_device: unknown SKU '%s' (valid: %s)\n", argv[1], rbln_sku_keys());
		goto out;
	}
	if (argc == 3 && mib == 0) {
		pr_err("rbln_sim: new_device: MEMORY_MIB must be at least 1\n");
		goto out;
	}
	spec->memory = rbln_sim_memory(spec->sku, mib);
	if (div_u64(spec->memory, spec->sku->chiplets) > RBLN_CHIPLET_WINDOW) {
		pr_err("rbln_sim: new_device: MEMORY_MIB %u is over %llu per chiplet (%u chiplets)\n",
		       mib, RBLN_CHIPLET_WINDOW / SZ_1M, spec->sku->chiplets);
		goto out;
	}
	ret = 0;
out:
	argv_free(argv);
	return ret;
}

int rbln_sim_new_device(const char *buf)
{
	struct rbln_sim_spec spec;
	int ret;

	ret = rbln_sim_parse_spec(buf, sim_memory_mib, &spec);
	if (ret)
		return ret;
	mutex_lock(&rbln_sim_lock);
	ret = rbln_sim_add(spec.id, spec.sku, spec.memory);
	mutex_unlock(&rbln_sim_lock);
	return ret;
}

int rbln_sim_del_device(unsigned int id)
{
	struct rbln_sim_device *sdev;
	int ret = 0;

	mutex_lock(&rbln_sim_lock);
	sdev = rbln_sim_find(id);
	if (sdev)
		rbln_sim_del(sdev);
	else
		ret = -ENOENT;
	mutex_unlock(&rbln_sim_lock);
	return ret;
}

struct rbln_device *rbln_sim_find_device(unsigned int id)
{
	struct rbln_device *rdev = NULL;
	struct rbln_sim_device *sdev;

	mutex_lock(&rbln_sim_lock);
	sdev = rbln_sim_find(id);
	if (sdev && sdev->rdev) {
		rdev = sdev->rdev;
		rbln_device_get(rdev);	/* the device may be removed once we unlock */
	}
	mutex_unlock(&rbln_sim_lock);
	rbln_test_point(RBLN_TP_SIM_FOUND);
	return rdev;
}

/* "ID SKU [MEMORY_MIB]" */
static ssize_t new_device_store(rbln_bus_type_arg *bus, const char *buf, size_t count)
{
	int ret = rbln_sim_new_device(buf);

	return ret ? ret : count;
}
static BUS_ATTR_WO(new_device);

/* "ID" */
static ssize_t del_device_store(rbln_bus_type_arg *bus, const char *buf, size_t count)
{
	unsigned int id;
	int ret;

	if (kstrtouint(buf, 0, &id)) {
		pr_err("rbln_sim: del_device: expected a device id, e.g. \"0\"\n");
		return -EINVAL;
	}
	ret = rbln_sim_del_device(id);
	return ret ? ret : count;
}
static BUS_ATTR_WO(del_device);

static struct attribute *rbln_sim_bus_attrs[] = {
	&bus_attr_new_device.attr,
	&bus_attr_del_device.attr,
	NULL
};
ATTRIBUTE_GROUPS(rbln_sim_bus);

static int rbln_sim_create_from_param(void)
{
	char *list, *cursor, *key;
	unsigned int id = 0;
	int ret = 0;

	list = kstrdup(sim_devices, GFP_KERNEL);
	if (!list)
		return -ENOMEM;
	cursor = list;
	mutex_lock(&rbln_sim_lock);
	while ((key = strsep(&cursor, ",")) && !ret) {
		const struct rbln_sku *sku;

		key = strim(key);
		if (!*key)
			continue;
		sku = rbln_sku_by_key(key);
		if (!sku) {
			pr_err("rbln: sim_devices: unknown SKU '%s' (valid: %s)\n",
			       key, rbln_sku_keys());
			ret = -EINVAL;
			break;
		}
		ret = rbln_sim_add(id++, sku, rbln_sim_memory(sku, sim_memory_mib));
	}
	mutex_unlock(&rbln_sim_lock);
	kfree(list);
	return ret;
}

static void rbln_sim_del_all(void)
{
	struct rbln_sim_device *sdev, *tmp;

	mutex_lock(&rbln_sim_lock);
	list_for_each_entry_safe_reverse(sdev, tmp, &rbln_sim_list, list)
		rbln_sim_del(sdev);
	mutex_unlock(&rbln_sim_lock);
}

int rbln_sim_init(void)
{
	int ret;

	ret = rbln_sim_wq_init();
	if (ret)
		return ret;
	rbln_sim_bus.bus_groups = rbln_sim_bus_groups;
	ret = bus_register(&rbln_sim_bus);
	if (ret)
		goto err_wq;
	ret = driver_register(&rbln_sim_driver);
	if (ret)
		goto err_bus;
	ret = rbln_sim_create_from_param();
	if (ret)
		goto err_devices;
	return 0;

err_devices:
	rbln_sim_del_all();
	driver_unregister(&rbln_sim_driver);
err_bus:
	bus_unregister(&rbln_sim_bus);
err_wq:
	rbln_sim_wq_fini();
	return ret;
}

void rbln_sim_exit(void)
{
	rbln_sim_del_all();
	driver_unregister(&rbln_sim_driver);
	bus_unregister(&rbln_sim_bus);
	rbln_sim_wq_fini();
}
