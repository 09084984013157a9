// The C ABI can grow: this test and the library are built with
// RBLN_DEVMGR_ABI_TEST_GROWTH, which adds a field to rbln_device_info,
// rbln_npu_info and rbln_client_info.  An old client built against the frozen
// first header (devmgr_v0.h) must still get its fields and nothing past them;
// a newer client's larger struct gets its tail zeroed.  Runs in the VM.
#include <cstring>
#include <string>

#include <gtest/gtest.h>

#include "old_client.h"
#include "rbln/devmgr.h"

#ifndef RBLN_DEVMGR_ABI_TEST_GROWTH
#error "this test must see the grown structs"
#endif

namespace {

constexpr uint64_t kGrownMarker = 0x600df1e1d;	// what the grown library puts in the field

rbln_device_info grown_info(rbln_device *dev)
{
	rbln_device_info info{};
	info.struct_size = sizeof(info);
	EXPECT_EQ(rbln_device_get_info(dev, &info), RBLN_OK) << rbln_last_error();
	return info;
}

TEST(AbiGrowth, TheTestBuildReallyGrewTheStructs)
{
	old_client_view old{};
	old_client_run(0, &old);
	EXPECT_GT(sizeof(rbln_device_info), old.info_size);

	rbln_device *dev = nullptr;
	ASSERT_EQ(rbln_device_open(0, &dev), RBLN_OK) << rbln_last_error();
	EXPECT_EQ(grown_info(dev).grown, kGrownMarker);
	rbln_device_close(dev);
}

TEST(AbiGrowth, AnOldClientGetsItsFieldsAndNothingPastThem)
{
	old_client_view old{};
	old_client_run(0, &old);
	ASSERT_EQ(old.info_status, RBLN_OK);
	ASSERT_EQ(old.npu_status, RBLN_OK);
	ASSERT_EQ(old.clients_status, RBLN_OK);
	EXPECT_TRUE(old.canaries_intact) << "the library wrote past an old client's struct";

	rbln_device *dev = nullptr;
	ASSERT_EQ(rbln_device_open(0, &dev), RBLN_OK) << rbln_last_error();
	rbln_device_info now = grown_info(dev);
	rbln_device_close(dev);
	EXPECT_EQ(old.index, 0u);
	EXPECT_STREQ(old.name, now.name);
	EXPECT_STREQ(old.uuid, now.uuid);
	EXPECT_STREQ(old.pci_bus_id, now.pci_bus_id);
	EXPECT_EQ(std::string(old.npu_uuid).size(), 36u);

	// Two clients of its own, walked with the old element size.
	EXPECT_GE(old.client_count, 2u);
	EXPECT_NE(old.client_ids[0], 0u);
	EXPECT_NE(old.client_ids[1], 0u);
	EXPECT_NE(old.client_ids[0], old.client_ids[1]);
}

TEST(AbiGrowth, ANewerClientsTailIsZeroed)
{
	struct {
		rbln_device_info info;
		uint64_t later[2];	// fields a future header would add
	} newer;
	std::memset(&newer, 0xa5, sizeof(newer));
	newer.info.struct_size = sizeof(newer);

	rbln_device *dev = nullptr;
	ASSERT_EQ(rbln_device_open(0, &dev), RBLN_OK) << rbln_last_error();
	ASSERT_EQ(rbln_device_get_info(dev, &newer.info), RBLN_OK) << rbln_last_error();
	EXPECT_EQ(newer.info.struct_size, sizeof(newer)) << "struct_size is the caller's";
	EXPECT_EQ(newer.info.grown, kGrownMarker);
	EXPECT_EQ(newer.later[0], 0u);
	EXPECT_EQ(newer.later[1], 0u);

	// A newer client's client array is walked with its element size too.
	struct wide_client {
		rbln_client_info info;
		uint64_t later;
	} list[3];
	std::memset(list, 0xa5, sizeof(list));
	list[0].info.struct_size = sizeof(wide_client);
	size_t count = 0;
	ASSERT_EQ(rbln_device_clients(dev, &list[0].info, 3, &count), RBLN_OK) << rbln_last_error();
	ASSERT_GE(count, 1u);
	for (size_t i = 0; i < std::min<size_t>(count, 3); i++) {
		EXPECT_NE(list[i].info.client_id, 0u) << i;
		EXPECT_EQ(list[i].info.grown, kGrownMarker) << i;
		EXPECT_EQ(list[i].later, 0u) << i;
	}
	rbln_device_close(dev);
}

TEST(AbiGrowth, AStructSmallerThanItsFirstVersionIsRefused)
{
	rbln_device *dev = nullptr;
	ASSERT_EQ(rbln_device_open(0, &dev), RBLN_OK) << rbln_last_error();
	rbln_device_info info{};
	info.struct_size = offsetof(rbln_device_info, name);
	EXPECT_EQ(rbln_device_get_info(dev, &info), RBLN_ERR_INVALID_ARGUMENT);
	EXPECT_NE(std::string(rbln_last_error()).find("struct_size"), std::string::npos);
	rbln_device_close(dev);
}

} // namespace
