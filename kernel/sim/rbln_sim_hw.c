// SPDX-License-Identifier: GPL-2.0-only
/*
 * The simulated hardware: identity derived from the device id (so a device
 * re-added under the same id is the same device to udev and to users), and
 * sensors that follow the utilisation measured from real engine busy time.
 */
#include <linux/nodemask.h>
#include <linux/string.h>

#include "../rbln_sku.h"
#include "rbln_sim.h"

#define RBLN_SIM_FIRMWARE_VERSION	"1.0.0-sim"
#define RBLN_SIM_IDLE_TEMP_MC		32000
#define RBLN_SIM_TEMP_PER_PERCENT_MC	400

void rbln_sim_fill_info(const struct rbln_sim_device *sdev, struct rbln_hw_info *info)
{
	const struct rbln_sku *sku = sdev->sku;
	/* A valid RFC 4122 version 4 layout with the product and id in it. */
	const uuid_t uuid = UUID_INIT(0x52424c4e, sku->pci_device_id, 0x4000 | sku->id,
				      0x80, 0x00, 0x00, 0x00, 0x00, 0x00,
				      (sdev->id >> 8) & 0xff, sdev->id & 0xff);

	memset(info, 0, sizeof(*info));
	info->sku = sku;
	info->index = sdev->id;
	info->memory_total = sdev->memory;
	info->uuid = uuid;
	snprintf(info->serial, sizeof(info->serial), "SIM%04X%06u",
		 sku->pci_device_id, sdev->id);
	/*
	 * In PCI's format, so tools read it as any bus id, but one no real
	 * function has (RBLN_SIM_PCI_DEVICE): neither it nor its
	 * /dev/rbln/by-path link can be a real board's.
	 */
	snprintf(info->pci_bus_id, sizeof(info->pci_bus_id), "0000:%02x:%02x.0",
		 sdev->id, RBLN_SIM_PCI_DEVICE);
	info->numa_node = sdev->id % num_online_nodes();
	strscpy(info->firmware_version, RBLN_SIM_FIRMWARE_VERSION,
		sizeof(info->firmware_version));
	info->capabilities = DRM_RBLN_CAP_SIMULATED;
	info->job_max_bytes = RBLN_SIM_JOB_MAX_BYTES;
	rbln_sim_fill_engines(sku->chiplets, info);
	rbln_sim_fill_links(sku->chiplets, info);
}

/*
 * The die-to-die wiring of the simulated package: its chiplets sit in a 2x2
 * grid (chiplet i in column i % 2, row i / 2), each linked to the chiplets
 * beside it, none across the diagonal: 0-1, 0-2, 1-3, 2-3 on Rebel100.  The
 * product documents say only "die-to-die links"; this is the simulator's
 * declaration, and tools read it from sysfs rather than assume it.
 */
void rbln_sim_fill_links(unsigned int chiplets, struct rbln_hw_info *info)
{
	unsigned int a, b;

	for (a = 0; a < chiplets; a++)
		for (b = 0; b < chiplets; b++) {
			unsigned int dcol = (a % 2) ^ (b % 2), drow = (a / 2) ^ (b / 2);

			if (dcol + drow == 1)
				info->links[a][b] = RBLN_HW_LINK_D2D;
		}
}

void rbln_sim_fill_engines(unsigned int chiplets, struct rbln_hw_info *info)
{
	unsigned int i;

	/* Every engine on every chiplet, but only chiplet 0 talks to the host. */
	for (i = 0; i < chiplets; i++)
		info->engines[i] = GENMASK(DRM_RBLN_ENGINE_COUNT - 1, 0) &
				   ~(i ? BIT(DRM_RBLN_ENGINE_EXTERNAL_HDMA) : 0);
}

static void rbln_sim_read_sensors(struct rbln_device *rdev, struct rbln_sensors *s)
{
	const struct rbln_sku *sku = rbln_device_info(rdev)->sku;
	u32 util = rbln_device_utilization(rdev);

	s->temperature_mc = RBLN_SIM_IDLE_TEMP_MC + util * RBLN_SIM_TEMP_PER_PERCENT_MC;
	s->power_uw = (sku->idle_power_mw +
		       (sku->max_power_mw - sku->idle_power_mw) / 100 * util) * 1000;
	/* The vendor's tools show P2 while working and P14 when idle. */
	s->pstate = util ? 2 : 14;
}

const struct rbln_hw_ops rbln_sim_hw_ops = {
	.read_sensors = rbln_sim_read_sensors,
	.engine_push = rbln_sim_engine_push,
	.engine_run_now = rbln_sim_engine_run_now,
	.engine_reset = rbln_sim_engine_reset,
	.device_reset = rbln_sim_device_reset,
	.sync_irq = rbln_sim_sync_irq,
	.mem_alloc = rbln_sim_mem_alloc,
	.mem_free = rbln_sim_mem_free,
	.mem_page = rbln_sim_mem_page,
};
