/*
 * An old client of libdevmgr: compiled against the frozen first header, so
 * its structs are smaller than the grown library's.  A canary after each
 * struct catches any write past what the old client owns.
 */
#include <string.h>

#include "devmgr_v0.h"
#include "old_client.h"

#define CANARY 0x0ddc0ffee0ddba11ull

/*
 * A binary linked before rbln_copy had struct_size was bound to the first
 * symbol version; the linker of today would pick the newest, so say it.
 */
__asm__(".symver rbln_submit,rbln_submit@RBLN_DEVMGR_0");

/* Two copies of the first header's 40-byte rbln_copy, host -> device -> host. */
static void old_client_submit(rbln_device *dev, struct old_client_view *view)
{
	rbln_buffer *in = NULL, *vram = NULL, *out = NULL;
	unsigned char *src = NULL, *dst = NULL;
	rbln_job *job = NULL;

	view->submit_status = view->wait_status = -1;
	if (rbln_buffer_alloc(dev, 8192, 0, RBLN_ALLOC_HOST, &in) != RBLN_OK ||
	    rbln_buffer_alloc(dev, 8192, 0, 0, &vram) != RBLN_OK ||
	    rbln_buffer_alloc(dev, 8192, 0, RBLN_ALLOC_HOST, &out) != RBLN_OK ||
	    rbln_buffer_map(in, (void **)&src) != RBLN_OK || rbln_buffer_map(out, (void **)&dst) != RBLN_OK)
		goto free;
	for (int i = 0; i < 8192; i++)
		src[i] = (unsigned char)(i * 7 + 3);
	memset(dst, 0, 8192);
	{
		const rbln_copy up[2] = {{in, vram, 0, 0, 4096}, {in, vram, 4096, 4096, 4096}};
		view->submit_status = rbln_submit(dev, RBLN_ENGINE_EXTERNAL_HDMA, 0, up, 2, "old", &job);
		if (view->submit_status != RBLN_OK)
			goto free;
		view->wait_status = rbln_job_wait(job, 10000000000ll);
		rbln_job_free(job);
		job = NULL;
		const rbln_copy down[1] = {{vram, out, 0, 0, 8192}};
		if (rbln_submit(dev, RBLN_ENGINE_EXTERNAL_HDMA, 0, down, 1, "old", &job) != RBLN_OK ||
		    rbln_job_wait(job, 10000000000ll) != RBLN_OK)
			view->wait_status = -2;
		rbln_job_free(job);
		view->copied_intact = memcmp(src, dst, 8192) == 0;
	}
free:
	if (in)
		rbln_buffer_free(in);
	if (vram)
		rbln_buffer_free(vram);
	if (out)
		rbln_buffer_free(out);
}

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
	old_client_submit(a, view);
out:
	rbln_device_close(a);
	rbln_device_close(b);
}
