// SPDX-License-Identifier: GPL-2.0-only
/*
 * The PCI backend's files in the core's debugfs directory of the device,
 * /sys/kernel/debug/rbln/rbln<index>/:
 *   fault_next_transfer  N: the next N device-bound transfers read IOVA 0,
 *                        which the IOMMU never maps: with intel-iommu on,
 *                        a DMAR fault; each such job fails with -EIO and the
 *                        device carries on
 *   stuck_engine         1: transfers started from now on never end (no
 *                        interrupt, the engine stays busy), as a hung DMA
 *                        engine: the device ends up wedged; 0: it works again
 *   transfers            transfers completed by their interrupt
 *   transfer_timeouts    transfers whose interrupt never came
 */
#include <linux/debugfs.h>

#include "rbln_pci.h"

static int rbln_pci_fault_get(void *data, u64 *val)
{
	*val = atomic_read(&((struct rbln_pci_device *)data)->fault_next);
	return 0;
}

static int rbln_pci_fault_set(void *data, u64 val)
{
	if (val > INT_MAX)
		return -EINVAL;
	atomic_set(&((struct rbln_pci_device *)data)->fault_next, val);
	return 0;
}

DEFINE_DEBUGFS_ATTRIBUTE(rbln_pci_fault_fops, rbln_pci_fault_get, rbln_pci_fault_set, "%llu\n");

void rbln_pci_debugfs_init(struct rbln_pci_device *edev)
{
	struct dentry *dir = rbln_device_debugfs_dir(edev->rdev);

	if (IS_ERR_OR_NULL(dir))
		return;
	debugfs_create_file_unsafe("fault_next_transfer", 0600, dir, edev, &rbln_pci_fault_fops);
	debugfs_create_bool("stuck_engine", 0600, dir, &edev->stuck);
	debugfs_create_u64("transfers", 0400, dir, &edev->transfers);
	debugfs_create_u64("transfer_timeouts", 0400, dir, &edev->transfer_timeouts);
}
