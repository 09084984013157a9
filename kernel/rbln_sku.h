/* SPDX-License-Identifier: GPL-2.0-only */
/* The products the driver knows: names, PCI ids, chiplets, nominal figures. */
#ifndef RBLN_SKU_H
#define RBLN_SKU_H

#include <linux/types.h>
#include <drm/rbln_drm.h>

struct rbln_sku {
	enum drm_rbln_sku id;
	const char *key;		/* short name used in module parameters: "atom" */
	const char *name;		/* marketing SKU shown to users: "RBLN-CA12" */
	u16 pci_device_id;
	u32 chiplets;
	u64 memory;			/* nominal bytes, as rbln-smi shows it */
	u32 idle_power_mw;
	u32 max_power_mw;
	bool pci_only;			/* a PCI backend's board: the simulator cannot make one */
};

/* A product the simulator can make, by key or name. */
const struct rbln_sku *rbln_sku_by_key(const char *key);
const struct rbln_sku *rbln_sku_by_id(enum drm_rbln_sku id);
/* "atom, atom-max, rebel100": for error messages. */
const char *rbln_sku_keys(void);

#endif /* RBLN_SKU_H */
