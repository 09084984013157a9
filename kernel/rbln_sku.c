// SPDX-License-Identifier: GPL-2.0-only
/*
 * Product table.  Memory is what the vendor's rbln-smi reports as usable:
 * 15.7 GiB on ATOM parts, 140.0 GiB on Rebel100 (144 GB HBM3E, part of it
 * reserved by firmware).
 */
#include <linux/kernel.h>
#include <linux/sizes.h>
#include <linux/string.h>

#include "rbln_sku.h"

static const struct rbln_sku rbln_skus[] = {
	{
		.id = DRM_RBLN_SKU_ATOM, .key = "atom", .name = "RBLN-CA12",
		.pci_device_id = 0x1120, .chiplets = 1,
		.memory = 16076ULL * SZ_1M,	/* 15.7 GiB */
		.idle_power_mw = 18000, .max_power_mw = 130000,
	},
	{
		.id = DRM_RBLN_SKU_ATOM_MAX, .key = "atom-max", .name = "RBLN-CA25",
		.pci_device_id = 0x1250, .chiplets = 1,
		.memory = 16076ULL * SZ_1M,
		.idle_power_mw = 25000, .max_power_mw = 180000,
	},
	{
		.id = DRM_RBLN_SKU_REBEL100, .key = "rebel100", .name = "RBLN-CR03",
		.pci_device_id = 0x2030, .chiplets = 4,
		.memory = 140ULL * SZ_1G,	/* 35 GiB per chiplet */
		.idle_power_mw = 60000, .max_power_mw = 600000,
	},
	{
		/*
		 * QEMU's edu device behind the PCI backend (kernel/pci/): a
		 * stand-in board, not Rebellions silicon.
		 */
		.id = DRM_RBLN_SKU_EDU, .key = "edu", .pci_only = true, .name = "RBLN-EDU",
		.pci_device_id = 0x11e8, .chiplets = 1,
		.memory = SZ_64M,
	},
};

const struct rbln_sku *rbln_sku_by_key(const char *key)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(rbln_skus); i++)
		if (!rbln_skus[i].pci_only && (sysfs_streq(key, rbln_skus[i].key) ||
					       sysfs_streq(key, rbln_skus[i].name)))
			return &rbln_skus[i];
	return NULL;
}

const struct rbln_sku *rbln_sku_by_id(enum drm_rbln_sku id)
{
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(rbln_skus); i++)
		if (rbln_skus[i].id == id)
			return &rbln_skus[i];
	return NULL;
}

const char *rbln_sku_keys(void)
{
	return "atom, atom-max, rebel100 (or RBLN-CA12, RBLN-CA25, RBLN-CR03)";
}
