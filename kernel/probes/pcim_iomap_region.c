// SPDX-License-Identifier: GPL-2.0-only
/* Compiles iff pcim_iomap_region(pdev, bar, name) exists (6.12 on; 6.1 has only pcim_iomap_regions). */
#include <linux/pci.h>

static void __iomem * __maybe_unused rbln_probe(struct pci_dev *pdev)
{
	return pcim_iomap_region(pdev, 0, "rbln");
}
