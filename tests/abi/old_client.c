/*
 * An old client of libdevmgr: compiled against the frozen first header, so
 * its structs are smaller than the grown library's.  A canary after each
 * struct catches any write past what the old client owns.
 */
#include <string.h>

#include "devmgr_v0.h"
#include "old_client.h"

#define CANARY 0x0ddc0ffee0ddba11ull

void old_client_run(unsigned index, struct old_client_view *view)
{
	struct { rbln_device_info info; uint64_t canary; } info = {.canary = CANARY};
	struct { rbln_npu_info info; uint64_t canary; } npu = {.canary = CANARY};
	struct { rbln_client_info list[2]; uint64_t canary; } clients = {.canary = CANARY};
	rbln_device *a = NULL, *b = NULL;

	memset(view, 0, sizeof(*view));
	view->info_size = sizeof(rbln_device_info);
	view->info_status = view->npu_status = view->clients_status = -1;
	if (rbln_device_open(index, &a) != RBLN_OK || rbln_device_open(index, &b) != RBLN_OK)
		goto out;

	info.info.struct_size = sizeof(info.info);
	view->info_status = rbln_device_get_info(a, &info.info);
	view->index = info.info.index;
	memcpy(view->name, info.info.name, sizeof(view->name));
	memcpy(view->uuid, info.info.uuid, sizeof(view->uuid));
	memcpy(view->pci_bus_id, info.info.pci_bus_id, sizeof(view->pci_bus_id));

	npu.info.struct_size = sizeof(npu.info);
	view->npu_status = rbln_npu_get(0, &npu.info);
	memcpy(view->npu_uuid, npu.info.uuid, sizeof(view->npu_uuid));

	clients.list[0].struct_size = sizeof(clients.list[0]);
	view->clients_status = rbln_device_clients(a, clients.list, 2, &view->client_count);
	view->client_ids[0] = clients.list[0].client_id;
	view->client_ids[1] = clients.list[1].client_id;

	view->canaries_intact = info.canary == CANARY && npu.canary == CANARY &&
				clients.canary == CANARY;
out:
	rbln_device_close(a);
	rbln_device_close(b);
}
