/*
 * What the "old client" (built against the frozen devmgr_v0.h) saw, in plain
 * C types, so that the test, built against the grown header, can read it.
 */
#ifndef RBLN_OLD_CLIENT_H
#define RBLN_OLD_CLIENT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

struct old_client_view {
	size_t info_size;		/* sizeof(rbln_device_info) as the old client knows it */
	int info_status, npu_status, clients_status;
	uint32_t index;
	char name[32], uuid[40], pci_bus_id[16];
	char npu_uuid[40];		/* rbln_npu_get(0) */
	size_t client_count;		/* the old client opens its NPU twice: two clients */
	uint64_t client_ids[2];
	int canaries_intact;		/* nothing was written past any old struct */
	int submit_status, wait_status;	/* its rbln_submit of two 40-byte copies */
	int copied_intact;		/* both copies arrived byte for byte */
};

/* Runs the old client's calls on NPU @index. */
void old_client_run(unsigned index, struct old_client_view *view);

#ifdef __cplusplus
}
#endif

#endif
