// SPDX-License-Identifier: GPL-2.0-only
/*
 * The PCI driver: binds QEMU's edu device (1234:11e8) and only that, checks
 * it is one, sets up its BAR, DMA mask and interrupt, and hands it to the
 * core as an NPU of one chiplet (rbln_device_create).  Its device memory is
 * system RAM, which the core maps for edu per job, as integrated NPUs (ivpu,
 * amdxdna) use RAM.  Removal, sysfs unbind and hot-unplug all end in
 * rbln_device_destroy(), as the simulator's del_device does.
 */
#include <linux/bitfield.h>
#include <linux/dma-mapping.h>
#include <linux/idr.h>
#include <linux/interrupt.h>
#include <linux/io.h>
#include <linux/iommu.h>
#include <linux/list.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/pci.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>

#include "../rbln_sku.h"
#include "rbln_pci.h"

#define PCI_VENDOR_ID_QEMU_EDU	0x1234
#define PCI_DEVICE_ID_QEMU_EDU	0x11e8

/* Long enough for both engines' jobs of RBLN_PCI_JOB_MAX_BYTES, one after the other, twice over. */
#define RBLN_PCI_JOB_MIN_TIMEOUT_MS \
	(2 * RBLN_PCI_NR_ENGINES * RBLN_PCI_JOB_MAX_XFERS * EDU_XFER_MS)

static DEFINE_IDA(rbln_pci_ida);
static DEFINE_MUTEX(rbln_pci_lock);	/* rbln_pci_list */
static LIST_HEAD(rbln_pci_list);

struct rbln_pci_entry {
	struct list_head link;
	struct rbln_pci_device *edev;
};

/* The core keeps its device in the PCI device's drvdata: ours is found here. */
static struct rbln_pci_device *rbln_pci_find(struct pci_dev *pdev, bool unlink)
{
	struct rbln_pci_device *edev = NULL;
	struct rbln_pci_entry *e;

	mutex_lock(&rbln_pci_lock);
	list_for_each_entry(e, &rbln_pci_list, link)
		if (e->edev->pdev == pdev) {
			edev = e->edev;
			if (unlink) {
				list_del(&e->link);
				kfree(e);
			}
			break;
		}
	mutex_unlock(&rbln_pci_lock);
	return edev;
}

/*
 * BAR0, requested (so /proc/iomem names rbln as its owner and no other
 * driver can claim it too) and mapped, both released by devres at unbind.
 * 6.12 on map one BAR by number; 6.1 has the mask form and its table.
 */
static int rbln_pci_map_bar0(struct rbln_pci_device *edev)
{
#ifdef RBLN_PROBE_PCIM_IOMAP_REGION
	void __iomem *mmio = pcim_iomap_region(edev->pdev, 0, "rbln");

	if (IS_ERR(mmio))
		return PTR_ERR(mmio);
	edev->mmio = mmio;
#else
	int ret = pcim_iomap_regions(edev->pdev, BIT(0), "rbln");

	if (ret)
		return ret;
	edev->mmio = pcim_iomap_table(edev->pdev)[0];
#endif
	return 0;
}

/* The ID register, and the liveness register's inverse: a device that answers as edu. */
static int rbln_pci_check_device(struct rbln_pci_device *edev, u32 *id)
{
	struct device *dev = &edev->pdev->dev;
	const u32 probe = 0x52424c4e;	/* "RBLN" */
	u32 back;

	*id = readl(edev->mmio + EDU_REG_ID);
	if ((*id & 0xff) != EDU_ID_MAGIC || *id == ~0U) {
		dev_err(dev, "not an edu device: ID register reads %#010x, expected 0xMMmm00ed\n", *id);
		return -ENODEV;
	}
	writel(probe, edev->mmio + EDU_REG_LIVENESS);
	back = readl(edev->mmio + EDU_REG_LIVENESS);
	if (back != ~probe) {
		dev_err(dev, "edu liveness check failed: wrote %#010x, read %#010x, expected %#010x\n",
			probe, back, ~probe);
		return -EIO;
	}
	return 0;
}

/* Whether an IOMMU translates the device's DMA (not absent, not passthrough). */
static bool rbln_pci_iommu_translates(struct device *dev)
{
	struct iommu_domain *domain = iommu_get_domain_for_dev(dev);

	return domain && iommu_is_dma_domain(domain);
}

/*
 * The link: edu is conventional PCI, so its link is that of the PCIe port
 * above it (a pcie-root-port), read from that port's Link Status; none
 * when it sits on the root bus (0: unknown).
 */
static void rbln_pci_fill_link(struct pci_dev *pdev, struct rbln_hw_info *info)
{
	static const u32 mts[] = { 0, 2500, 5000, 8000, 16000, 32000, 64000 };
	struct pci_dev *port = pci_is_pcie(pdev) ? pdev : pci_upstream_bridge(pdev);
	u16 lnksta;
	u32 speed;

	if (!port || !pci_is_pcie(port) ||
	    pcie_capability_read_word(port, PCI_EXP_LNKSTA, &lnksta))
		return;
	speed = FIELD_GET(PCI_EXP_LNKSTA_CLS, lnksta);
	info->pci_link_speed_mts = speed < ARRAY_SIZE(mts) ? mts[speed] : 0;
	info->pci_link_width = FIELD_GET(PCI_EXP_LNKSTA_NLW, lnksta);
}

static void rbln_pci_fill_info(struct rbln_pci_device *edev, u32 id, struct rbln_hw_info *info)
{
	struct pci_dev *pdev = edev->pdev;
	/* Stable per slot, so a re-plugged board is the same device to udev. */
	const uuid_t uuid = UUID_INIT(0x52424c4e, PCI_DEVICE_ID_QEMU_EDU, 0x4000 | DRM_RBLN_SKU_EDU,
				      0x80, 0x00, 0x00, 0x00,
				      pci_domain_nr(pdev->bus) >> 8, pci_domain_nr(pdev->bus) & 0xff,
				      pdev->bus->number, pdev->devfn);

	memset(info, 0, sizeof(*info));
	info->sku = rbln_sku_by_id(DRM_RBLN_SKU_EDU);
	info->index = edev->index;
	info->memory_total = RBLN_PCI_MEMORY;
	info->uuid = uuid;
	snprintf(info->serial, sizeof(info->serial), "EDU%04x%02x%02x%u", pci_domain_nr(pdev->bus),
		 pdev->bus->number, PCI_SLOT(pdev->devfn), PCI_FUNC(pdev->devfn));
	strscpy(info->pci_bus_id, pci_name(pdev), sizeof(info->pci_bus_id));
	info->numa_node = dev_to_node(&pdev->dev);
	snprintf(info->firmware_version, sizeof(info->firmware_version), "edu %u.%u",
		 id >> 24, (id >> 16) & 0xff);
	info->pci_vendor_id = pdev->vendor;
	info->pci_device_id = pdev->device;
	rbln_pci_fill_link(pdev, info);
	info->job_max_bytes = RBLN_PCI_JOB_MAX_BYTES;
	info->job_min_timeout_ms = RBLN_PCI_JOB_MIN_TIMEOUT_MS;
	info->engines[0] = RBLN_PCI_ENGINES;
	info->dma_dev = &pdev->dev;
}

/* edu has no sensors: the figures are what an idle or busy board would show. */
static void rbln_pci_read_sensors(struct rbln_device *rdev, struct rbln_sensors *s)
{
	s->temperature_mc = 0;
	s->power_uw = 0;
	s->pstate = rbln_device_utilization(rdev) ? 2 : 14;
}

/* Device memory and host buffers alike are system RAM, charged to the caller's memory cgroup. */
static void *rbln_pci_mem_alloc(struct rbln_device *rdev, u32 chiplet, u64 address, size_t size)
{
	return __vmalloc(size, GFP_KERNEL_ACCOUNT | __GFP_ZERO | __GFP_NOWARN);
}

static void rbln_pci_mem_free(struct rbln_device *rdev, void *vaddr)
{
	vfree(vaddr);
}

static struct page *rbln_pci_mem_page(struct rbln_device *rdev, void *vaddr, size_t offset)
{
	return vmalloc_to_page(vaddr + offset);
}

/*
 * No engine_run_now: a transfer takes edu 100 ms, so no job ends in the
 * bounded time SUBMIT's direct path needs.
 */
static const struct rbln_hw_ops rbln_pci_hw_ops = {
	.read_sensors = rbln_pci_read_sensors,
	.engine_check = rbln_pci_engine_check,
	.engine_push = rbln_pci_engine_push,
	.engine_reset = rbln_pci_engine_reset,
	.device_reset = rbln_pci_device_reset,
	.sync_irq = rbln_pci_sync_irq,
	.mem_alloc = rbln_pci_mem_alloc,
	.mem_free = rbln_pci_mem_free,
	.mem_page = rbln_pci_mem_page,
};

static int rbln_pci_probe(struct pci_dev *pdev, const struct pci_device_id *ids)
{
	struct device *dev = &pdev->dev;
	struct rbln_pci_device *edev;
	struct rbln_pci_entry *entry;
	struct rbln_hw_info info;
	struct rbln_device *rdev;
	u32 id;
	int ret;

	edev = devm_kzalloc(dev, sizeof(*edev), GFP_KERNEL);
	entry = kzalloc(sizeof(*entry), GFP_KERNEL);
	if (!edev || !entry) {
		kfree(entry);
		return -ENOMEM;
	}
	edev->pdev = pdev;
	rbln_pci_dma_init(edev);

	ret = pcim_enable_device(pdev);
	if (ret) {
		dev_err(dev, "cannot enable the device: %d\n", ret);
		goto err_entry;
	}
	ret = rbln_pci_map_bar0(edev);
	if (ret) {
		dev_err(dev, "cannot request and map BAR0 (another driver holds it?): %d\n", ret);
		goto err_entry;
	}
	ret = rbln_pci_check_device(edev, &id);
	if (ret)
		goto err_entry;
	ret = dma_set_mask_and_coherent(dev, DMA_BIT_MASK(EDU_DMA_BITS));
	if (ret) {
		dev_err(dev, "no %u-bit DMA on this host: %d\n", EDU_DMA_BITS, ret);
		goto err_entry;
	}
	/*
	 * Without an IOMMU a bus address is a physical one, and pages above
	 * 256 MiB cannot be mapped for edu (dma-direct warns and fails; x86
	 * sets up no swiotlb below 4 GiB of RAM to bounce through).
	 */
	if (!rbln_pci_iommu_translates(dev) &&
	    dma_get_required_mask(dev) > DMA_BIT_MASK(EDU_DMA_BITS)) {
		dev_err(dev, "edu reaches only the low 256 MiB (%u-bit DMA), this host's RAM goes beyond it, and no IOMMU translates for the device: boot with intel_iommu=on (qemu: -device intel-iommu) to use it\n",
			EDU_DMA_BITS);
		ret = -ENODEV;
		goto err_entry;
	}
	ret = rbln_pci_dma_wait_stale(edev);
	if (ret) {
		dev_err(dev, "edu's DMA engine did not go idle (a transfer of the previous binding): %d\n",
			ret);
		goto err_entry;
	}
	pci_set_master(pdev);
	/* edu has one MSI vector; INTx where MSI is off.  PCI_IRQ_ALL_TYPES names both on every kernel. */
	ret = pci_alloc_irq_vectors(pdev, 1, 1, PCI_IRQ_ALL_TYPES);
	if (ret < 0) {
		dev_err(dev, "no interrupt: %d\n", ret);
		goto err_entry;
	}
	edev->irq = pci_irq_vector(pdev, 0);
	ret = devm_request_threaded_irq(dev, edev->irq, rbln_pci_irq, rbln_pci_irq_thread,
					IRQF_SHARED, "rbln", edev);
	if (ret) {
		dev_err(dev, "cannot request IRQ %d: %d\n", edev->irq, ret);
		goto err_entry;
	}

	ret = ida_alloc_min(&rbln_pci_ida, RBLN_PCI_FIRST_INDEX, GFP_KERNEL);
	if (ret < 0)
		goto err_entry;
	edev->index = ret;
	rbln_pci_fill_info(edev, id, &info);
	rdev = rbln_device_create(dev, &info, &rbln_pci_hw_ops, edev);
	if (IS_ERR(rdev)) {
		ret = PTR_ERR(rdev);
		dev_err(dev, "cannot create the NPU: %d\n", ret);
		goto err_ida;
	}
	edev->rdev = rdev;
	rbln_pci_debugfs_init(edev);
	entry->edev = edev;
	mutex_lock(&rbln_pci_lock);
	list_add_tail(&entry->link, &rbln_pci_list);
	mutex_unlock(&rbln_pci_lock);
	dev_info(dev, "rbln%u: edu %u.%u, %s MSI, IRQ %d, %u-bit DMA\n", edev->index, id >> 24,
		 (id >> 16) & 0xff, pdev->msi_enabled ? "with" : "without", edev->irq, EDU_DMA_BITS);
	return 0;

err_ida:
	ida_free(&rbln_pci_ida, edev->index);
err_entry:
	kfree(entry);
	return ret;
}

static void rbln_pci_remove(struct pci_dev *pdev)
{
	struct rbln_pci_device *edev = rbln_pci_find(pdev, true);

	if (WARN_ON(!edev))
		return;
	/* Open files get ENODEV, jobs end, mappings SIGBUS; our work and IRQ are done after it. */
	rbln_device_destroy(edev->rdev);
	ida_free(&rbln_pci_ida, edev->index);
}

/* Reboot or kexec: no DMA may reach memory the next kernel owns. */
static void rbln_pci_shutdown(struct pci_dev *pdev)
{
	struct rbln_pci_device *edev = rbln_pci_find(pdev, false);

	if (edev)
		rbln_pci_dma_quiesce(edev);
}

/* QEMU's edu device only: never Rebellions' ids. */
static const struct pci_device_id rbln_pci_ids[] = {
	{ PCI_DEVICE(PCI_VENDOR_ID_QEMU_EDU, PCI_DEVICE_ID_QEMU_EDU) },
	{ }
};
MODULE_DEVICE_TABLE(pci, rbln_pci_ids);

static struct pci_driver rbln_pci_driver = {
	.name = "rbln",
	.id_table = rbln_pci_ids,
	.probe = rbln_pci_probe,
	.remove = rbln_pci_remove,
	.shutdown = rbln_pci_shutdown,
};

int rbln_pci_init(void)
{
	int ret = rbln_pci_dma_wq_init();

	if (ret)
		return ret;
	ret = pci_register_driver(&rbln_pci_driver);
	if (ret)
		rbln_pci_dma_wq_fini();
	return ret;
}

void rbln_pci_exit(void)
{
	pci_unregister_driver(&rbln_pci_driver);
	rbln_pci_dma_wq_fini();
}
