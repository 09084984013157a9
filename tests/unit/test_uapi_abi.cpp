// The UAPI is frozen once released: these are the sizes and offsets user space
// was built against.  A failure here means an ABI break, not a test to update;
// structs may only grow at the end (and then only the size check changes).
#include <cstddef>

#include <gtest/gtest.h>

#include "rbln_drm.h"

#define EXPECT_FIELD(type, field, offset) EXPECT_EQ(offsetof(type, field), size_t{offset}) << #field

TEST(UapiAbi, VersionRangeIsConsistent)
{
	EXPECT_GE(DRM_RBLN_UAPI_VERSION, DRM_RBLN_UAPI_COMPAT_VERSION);
	EXPECT_GE(DRM_RBLN_UAPI_COMPAT_VERSION, 1);
}

TEST(UapiAbi, GetParamLayout)
{
	using T = drm_rbln_get_param;
	EXPECT_EQ(sizeof(T), 24u);
	EXPECT_FIELD(T, param, 0);
	EXPECT_FIELD(T, flags, 4);
	EXPECT_FIELD(T, chiplet, 8);
	EXPECT_FIELD(T, reserved, 12);
	EXPECT_FIELD(T, value, 16);
}

TEST(UapiAbi, DeviceInfoLayout)
{
	using T = drm_rbln_device_info;
	EXPECT_EQ(sizeof(T), 208u);
	EXPECT_FIELD(T, flags, 0);
	EXPECT_FIELD(T, reserved0, 4);
	EXPECT_FIELD(T, index, 8);
	EXPECT_FIELD(T, sku, 12);
	EXPECT_FIELD(T, pci_vendor_id, 16);
	EXPECT_FIELD(T, pci_device_id, 18);
	EXPECT_FIELD(T, chiplet_count, 20);
	EXPECT_FIELD(T, numa_node, 24);
	EXPECT_FIELD(T, uapi_version, 28);
	EXPECT_FIELD(T, memory_total, 32);
	EXPECT_FIELD(T, capabilities, 40);
	EXPECT_FIELD(T, uuid, 48);
	EXPECT_FIELD(T, name, 64);
	EXPECT_FIELD(T, serial, 96);
	EXPECT_FIELD(T, pci_bus_id, 128);
	EXPECT_FIELD(T, firmware_version, 144);
	EXPECT_FIELD(T, driver_version, 176);
}

TEST(UapiAbi, BufferObjectLayouts)
{
	EXPECT_EQ(sizeof(drm_rbln_bo_create), 24u);
	EXPECT_FIELD(drm_rbln_bo_create, size, 0);
	EXPECT_FIELD(drm_rbln_bo_create, flags, 8);
	EXPECT_FIELD(drm_rbln_bo_create, chiplet, 12);
	EXPECT_FIELD(drm_rbln_bo_create, handle, 16);
	EXPECT_FIELD(drm_rbln_bo_create, reserved, 20);

	EXPECT_EQ(sizeof(drm_rbln_bo_info), 40u);
	EXPECT_FIELD(drm_rbln_bo_info, handle, 0);
	EXPECT_FIELD(drm_rbln_bo_info, flags, 4);
	EXPECT_FIELD(drm_rbln_bo_info, size, 8);
	EXPECT_FIELD(drm_rbln_bo_info, device_address, 16);
	EXPECT_FIELD(drm_rbln_bo_info, mmap_offset, 24);
	EXPECT_FIELD(drm_rbln_bo_info, chiplet, 32);
	EXPECT_FIELD(drm_rbln_bo_info, reserved, 36);
}

TEST(UapiAbi, DmaLayouts)
{
	EXPECT_EQ(sizeof(drm_rbln_copy), 32u);
	EXPECT_FIELD(drm_rbln_copy, src_handle, 0);
	EXPECT_FIELD(drm_rbln_copy, dst_handle, 4);
	EXPECT_FIELD(drm_rbln_copy, src_offset, 8);
	EXPECT_FIELD(drm_rbln_copy, dst_offset, 16);
	EXPECT_FIELD(drm_rbln_copy, size, 24);

	EXPECT_EQ(sizeof(drm_rbln_submit), 88u);
	EXPECT_FIELD(drm_rbln_submit, engine, 0);
	EXPECT_FIELD(drm_rbln_submit, chiplet, 4);
	EXPECT_FIELD(drm_rbln_submit, copies, 8);
	EXPECT_FIELD(drm_rbln_submit, copy_count, 16);
	EXPECT_FIELD(drm_rbln_submit, copy_size, 20);
	EXPECT_FIELD(drm_rbln_submit, label, 24);
	EXPECT_FIELD(drm_rbln_submit, flags, 32);
	EXPECT_FIELD(drm_rbln_submit, reserved, 36);
	EXPECT_FIELD(drm_rbln_submit, seqno, 40);
	EXPECT_FIELD(drm_rbln_submit, in_syncs, 48);
	EXPECT_FIELD(drm_rbln_submit, in_sync_count, 56);
	EXPECT_FIELD(drm_rbln_submit, reserved2, 60);
	EXPECT_FIELD(drm_rbln_submit, out_sync, 64);
	EXPECT_FIELD(drm_rbln_submit, ended, 80);
	EXPECT_FIELD(drm_rbln_submit, status, 84);
	EXPECT_EQ(sizeof(drm_rbln_sync), 16u);
	EXPECT_FIELD(drm_rbln_sync, handle, 0);
	EXPECT_FIELD(drm_rbln_sync, flags, 4);
	EXPECT_FIELD(drm_rbln_sync, point, 8);

	EXPECT_EQ(sizeof(drm_rbln_submit_batch), 32u);
	EXPECT_FIELD(drm_rbln_submit_batch, submits, 0);
	EXPECT_FIELD(drm_rbln_submit_batch, count, 8);
	EXPECT_FIELD(drm_rbln_submit_batch, submit_size, 12);
	EXPECT_FIELD(drm_rbln_submit_batch, flags, 16);
	EXPECT_FIELD(drm_rbln_submit_batch, submitted, 20);
	EXPECT_FIELD(drm_rbln_submit_batch, error, 24);
	EXPECT_FIELD(drm_rbln_submit_batch, reserved, 28);
	EXPECT_EQ(DRM_IOCTL_RBLN_SUBMIT_BATCH, DRM_IOWR(DRM_COMMAND_BASE + 0x0d, drm_rbln_submit_batch));

	EXPECT_EQ(sizeof(drm_rbln_wait), 24u);
	EXPECT_FIELD(drm_rbln_wait, seqno, 0);
	EXPECT_FIELD(drm_rbln_wait, timeout_ns, 8);
	EXPECT_FIELD(drm_rbln_wait, flags, 16);
	EXPECT_FIELD(drm_rbln_wait, status, 20);
}

TEST(UapiAbi, ClientUsageLayout)
{
	using T = drm_rbln_client_usage;
	EXPECT_EQ(sizeof(T), 72u);
	EXPECT_FIELD(T, flags, 0);
	EXPECT_FIELD(T, reserved, 4);
	EXPECT_FIELD(T, client_id, 8);
	EXPECT_FIELD(T, memory_total, 16);
	EXPECT_FIELD(T, memory_resident, 24);
	EXPECT_FIELD(T, device_memory, 32);
	EXPECT_FIELD(T, engine_busy_ns, 40);
}

TEST(UapiAbi, ClientListLayouts)
{
	EXPECT_EQ(sizeof(drm_rbln_acquire), 8u);
	EXPECT_EQ(sizeof(drm_rbln_client), 56u);
	EXPECT_FIELD(drm_rbln_client, client_id, 0);
	EXPECT_FIELD(drm_rbln_client, creator_pid, 8);
	EXPECT_FIELD(drm_rbln_client, uid, 12);
	EXPECT_FIELD(drm_rbln_client, flags, 16);
	EXPECT_FIELD(drm_rbln_client, reserved, 20);
	EXPECT_FIELD(drm_rbln_client, device_memory, 24);
	EXPECT_FIELD(drm_rbln_client, idle_ns, 32);
	EXPECT_FIELD(drm_rbln_client, creator_comm, 40);
	EXPECT_EQ(sizeof(drm_rbln_reclaim), 24u);
	EXPECT_FIELD(drm_rbln_reclaim, client_id, 0);
	EXPECT_FIELD(drm_rbln_reclaim, flags, 8);
	EXPECT_FIELD(drm_rbln_reclaim, reserved, 12);
	EXPECT_FIELD(drm_rbln_reclaim, freed_bytes, 16);
	EXPECT_EQ(sizeof(drm_rbln_device_status), 64u);
	EXPECT_FIELD(drm_rbln_device_status, flags, 0);
	EXPECT_FIELD(drm_rbln_device_status, status, 4);
	EXPECT_FIELD(drm_rbln_device_status, temperature_mc, 8);
	EXPECT_FIELD(drm_rbln_device_status, utilization, 12);
	EXPECT_FIELD(drm_rbln_device_status, power_uw, 16);
	EXPECT_FIELD(drm_rbln_device_status, pstate, 24);
	EXPECT_FIELD(drm_rbln_device_status, reserved, 28);
	EXPECT_FIELD(drm_rbln_device_status, memory_total, 32);
	EXPECT_FIELD(drm_rbln_device_status, busy_ns, 56);
	EXPECT_EQ(sizeof(drm_rbln_reset), 8u);
	EXPECT_FIELD(drm_rbln_reset, flags, 0);
	EXPECT_FIELD(drm_rbln_reset, revoked, 4);
	EXPECT_EQ(sizeof(drm_rbln_list_clients), 24u);
	EXPECT_FIELD(drm_rbln_list_clients, flags, 0);
	EXPECT_FIELD(drm_rbln_list_clients, count, 4);
	EXPECT_FIELD(drm_rbln_list_clients, entries, 8);
	EXPECT_FIELD(drm_rbln_list_clients, entry_size, 16);
	EXPECT_FIELD(drm_rbln_list_clients, reserved, 20);
}

TEST(UapiAbi, IoctlNumbersAreStable)
{
	EXPECT_EQ(DRM_IOCTL_RBLN_GET_PARAM, 0xc0186440ul);
	EXPECT_EQ(DRM_IOCTL_RBLN_DEVICE_INFO, 0xc0d06441ul);
	EXPECT_EQ(DRM_IOCTL_RBLN_BO_CREATE, 0xc0186442ul);
	EXPECT_EQ(DRM_IOCTL_RBLN_BO_INFO, 0xc0286443ul);
	// SUBMIT grew in interface 10 (48 -> 80 bytes) and 11 (88); the DRM
	// core dispatches by number and copies the caller's size, so 0xc0306444
	// and 0xc0506444 of older binaries still work (the VM test
	// Sync.OldSubmitStructStillWorks).
	EXPECT_EQ(DRM_IOCTL_RBLN_SUBMIT, 0xc0586444ul);
	EXPECT_EQ(DRM_IOCTL_RBLN_WAIT, 0xc0186445ul);
	EXPECT_EQ(DRM_IOCTL_RBLN_CLIENT_USAGE, 0xc0486446ul);
	EXPECT_EQ(DRM_IOCTL_RBLN_ACQUIRE, 0xc0086447ul);
	EXPECT_EQ(DRM_IOCTL_RBLN_RELEASE, 0xc0086448ul);
	EXPECT_EQ(DRM_IOCTL_RBLN_LIST_CLIENTS, 0xc0186449ul);
	EXPECT_EQ(DRM_IOCTL_RBLN_RECLAIM, 0xc018644aul);
	EXPECT_EQ(DRM_IOCTL_RBLN_RESET, 0xc008644bul);
	EXPECT_EQ(DRM_IOCTL_RBLN_DEVICE_STATUS, 0xc040644cul);
}

TEST(UapiAbi, EnumValuesAreStable)
{
	EXPECT_EQ(DRM_RBLN_STATUS_READY, 0);
	EXPECT_EQ(DRM_RBLN_STATUS_BUSY, 1);
	EXPECT_EQ(DRM_RBLN_STATUS_INIT, 2);
	EXPECT_EQ(DRM_RBLN_STATUS_FAULT, 3);
	EXPECT_EQ(DRM_RBLN_STATUS_FINISH, 4);
	EXPECT_EQ(DRM_RBLN_SKU_ATOM, 1);
	EXPECT_EQ(DRM_RBLN_SKU_ATOM_MAX, 2);
	EXPECT_EQ(DRM_RBLN_SKU_REBEL100, 3);
	EXPECT_EQ(DRM_RBLN_ENGINE_EXTERNAL_HDMA, 3);
	EXPECT_EQ(DRM_RBLN_PARAM_BUSY_NS, 11);
	EXPECT_EQ(DRM_RBLN_PARAM_MEMORY_PLACED, 12);
	EXPECT_EQ(DRM_RBLN_PARAM_JOB_MAX_BYTES, 13);
	EXPECT_EQ(DRM_RBLN_BO_EAGER, 1u);
	EXPECT_EQ(DRM_RBLN_BO_HOST, 2u);
	EXPECT_EQ(DRM_RBLN_CHIPLET_INTERLEAVED, 0xffffffffu);
	EXPECT_EQ(DRM_RBLN_MAX_COPIES, 4096);
	EXPECT_EQ(DRM_RBLN_LABEL_MAX, 64);
	EXPECT_EQ(DRM_RBLN_MAX_INFLIGHT, 256);
	EXPECT_EQ(RBLN_GENL_ATTR_EVENT, 2);
	EXPECT_EQ(RBLN_GENL_ATTR_BYTES, 8);
	EXPECT_EQ(RBLN_GENL_EVENT_DEVICE_ADDED, 1);
	EXPECT_EQ(RBLN_GENL_EVENT_MEMORY_ERROR, 8);
	EXPECT_EQ(RBLN_GENL_EVENT_RESET, 9);
}
