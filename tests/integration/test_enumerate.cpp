// Enumeration, lookup, the process's logical devices and hotplug events,
// against the real module and udevd.
#include <cstdlib>

#include <gtest/gtest.h>

#include "rbln/enumerate.hpp"
#include "rbln_test_util.h"

using namespace std::chrono_literals;

TEST(Enumerate, FindsTheSimulatedNpusInBusOrder)
{
	auto npus = rbln::enumerate_npus();
	auto sims = rbln::test::sim_devices();
	ASSERT_EQ(npus.size(), sims.size());
	for (size_t i = 0; i < npus.size(); i++) {
		EXPECT_EQ(npus[i].index, sims[i].index);
		EXPECT_EQ(npus[i].node, sims[i].node);
		EXPECT_TRUE(npus[i].node_present);
		EXPECT_EQ(npus[i].status, "READY");
		if (i) {
			EXPECT_LT(npus[i - 1].pci_bus_id, npus[i].pci_bus_id);
		}
	}
	EXPECT_EQ(npus[0].name, "RBLN-CA12");
	EXPECT_EQ(npus[1].name, "RBLN-CR03");
	EXPECT_EQ(npus[1].chiplet_count, 4u);
	EXPECT_EQ(npus[1].memory_total, 64ull << 20);
}

TEST(Enumerate, PickByIndexUuidOrBusId)
{
	auto rebel = rbln::enumerate_npus().at(1);
	EXPECT_EQ(rbln::find_npu("1").node, rebel.node);
	EXPECT_EQ(rbln::find_npu(rebel.uuid).index, 1u);
	EXPECT_EQ(rbln::find_npu(rebel.pci_bus_id).index, 1u);
	try {
		rbln::find_npu("0000:99:00.0");
		ADD_FAILURE() << "found a device that does not exist";
	} catch (const rbln::Error &e) {
		EXPECT_EQ(e.code(), rbln::Errc::no_device);
		EXPECT_NE(std::string(e.what()).find("no NPU matches '0000:99:00.0' (an index, uuid or PCI "
						     "bus id); this host has: 0 (0000:00:20.0"),
			  std::string::npos) << e.what();
	}
}

TEST(Enumerate, LogicalDevicesFollowTheEnvironment)
{
	setenv("RBLN_DEVICE_MAP", "[0,1]", 1);
	EXPECT_EQ(rbln::device_summary(), "Logical Device | Physical NPU IDs | Status\n"
					  "0              | 0, 1             | Active (Aggregated)\n"
					  "(Physical NPU IDs are host ids, N of /dev/rblnN, which a container "
					  "keeps; RBLN_DEVICE_MAP counts the visible NPUs from 0 in "
					  "RBLN_VISIBLE_DEVICES order)\n");
	unsetenv("RBLN_DEVICE_MAP");
	setenv("RBLN_NPUS_PER_DEVICE", "4", 1);
	auto plan = rbln::logical_devices();	// never throws
	EXPECT_TRUE(plan.devices.empty());
	EXPECT_NE(rbln::device_summary().find("warning: no logical device is available: No logical "
					      "device (this process has 2 physical NPU(s), need 4"),
		  std::string::npos);
	unsetenv("RBLN_NPUS_PER_DEVICE");
	EXPECT_EQ(rbln::logical_devices().devices.size(), 2u);
}

TEST(Enumerate, MonitorSeesAddChangeAndRemove)
{
	rbln::NpuMonitor monitor;
	// The next event of NPU 12 of that kind (and status, for changes).
	auto next_of = [&](rbln::NpuEvent::Kind kind,
			   const std::string &status = "") -> std::optional<rbln::NpuEvent> {
		for (int i = 0; i < 50; i++) {
			auto ev = monitor.next(10s);
			if (!ev)
				return std::nullopt;
			if (ev->kind == kind && ev->index == 12u && (status.empty() || ev->status == status))
				return ev;
		}
		return std::nullopt;
	};
	ASSERT_EQ(rbln::test::sim_new_device("12 atom 16"), 0);
	auto added = next_of(rbln::NpuEvent::Kind::added);
	ASSERT_TRUE(added) << "no add event for NPU 12";

	EXPECT_TRUE(next_of(rbln::NpuEvent::Kind::changed, "READY")) << "NPU 12 did not come up";

	ASSERT_EQ(rbln::test::write_file("/sys/kernel/debug/rbln/rbln12/memory_error", "0"), 0);
	auto changed = next_of(rbln::NpuEvent::Kind::changed, "FAULT");
	ASSERT_TRUE(changed) << "no FAULT change event for NPU 12";
	EXPECT_EQ(changed->sysfs, added->sysfs);

	ASSERT_EQ(rbln::test::sim_del_device(12), 0);
	auto removed = next_of(rbln::NpuEvent::Kind::removed);
	ASSERT_TRUE(removed) << "no remove event for NPU 12";
	EXPECT_EQ(removed->sysfs, added->sysfs);
}
