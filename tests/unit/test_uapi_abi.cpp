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

TEST(UapiAbi, IoctlNumbersAreStable)
{
	EXPECT_EQ(DRM_IOCTL_RBLN_GET_PARAM, 0xc0186440ul);
	EXPECT_EQ(DRM_IOCTL_RBLN_DEVICE_INFO, 0xc0d06441ul);
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
}
