// SPDX-License-Identifier: MIT
// The device plugin's pure logic: which NPUs a pod should get, what Allocate
// answers, how resources and modes are named.
#include <gtest/gtest.h>

#include "allocation.hpp"
#include "inventory.hpp"
#include "preferred.hpp"

using namespace rbln::k8s;
using Ids = std::vector<std::string>;

namespace {

// NPUs n0..n(count-1), @per_node consecutive ones per NUMA node.
std::vector<Candidate> host(unsigned count, unsigned per_node)
{
	std::vector<Candidate> out;
	for (unsigned i = 0; i < count; i++)
		out.push_back({"n" + std::to_string(i), int(i / per_node), i});
	return out;
}

std::vector<Candidate> without(std::vector<Candidate> c, const Ids &gone)
{
	std::erase_if(c, [&](const Candidate &x) { return std::ranges::find(gone, x.id) != gone.end(); });
	return c;
}

} // namespace

TEST(PreferredAllocation, StaysOnOneNumaNode)
{
	// n0..n3 on node 0, n4..n7 on node 1; n1, n2 taken: four fit only on node 1.
	EXPECT_EQ(preferred_allocation(without(host(8, 4), {"n1", "n2"}), {}, 4), (Ids{"n4", "n5", "n6", "n7"}));
	// Two fit on node 0 (n0, n3) but n4, n5 are closer together and aligned.
	EXPECT_EQ(preferred_allocation(without(host(8, 4), {"n1", "n2"}), {}, 2), (Ids{"n4", "n5"}));
}

TEST(PreferredAllocation, GroupsStartOnAMultipleOfTheirSize)
{
	// n0 taken: of n1..n7, the aligned pair n2, n3 beats n1, n2; the aligned four n4..n7.
	EXPECT_EQ(preferred_allocation(without(host(8, 8), {"n0"}), {}, 2), (Ids{"n2", "n3"}));
	EXPECT_EQ(preferred_allocation(without(host(8, 8), {"n0"}), {}, 4), (Ids{"n4", "n5", "n6", "n7"}));
	EXPECT_EQ(preferred_allocation(host(16, 16), {}, 8), (Ids{"n0", "n1", "n2", "n3", "n4", "n5", "n6", "n7"}));
}

TEST(PreferredAllocation, KeepsTheRequiredDevices)
{
	EXPECT_EQ(preferred_allocation(host(8, 4), {"n5"}, 2), (Ids{"n4", "n5"}));
	// Required devices on two nodes: the rest added next to them.
	EXPECT_EQ(preferred_allocation(host(8, 4), {"n0", "n7"}, 3), (Ids{"n0", "n1", "n7"}));
}

TEST(PreferredAllocation, FewerAvailableThanWantedGivesAll)
{
	EXPECT_EQ(preferred_allocation(host(2, 2), {}, 4), (Ids{"n0", "n1"}));
	EXPECT_TRUE(preferred_allocation(host(2, 2), {}, 0).empty());
}

TEST(Inventory, ResourceNamesPerMode)
{
	EXPECT_EQ(resource_names(ResourceMode::family), (Ids{"rebellions.ai/ATOM", "rebellions.ai/REBEL"}));
	EXPECT_EQ(resource_names(ResourceMode::single), (Ids{"rebellions.ai/npu"}));
	Npu atom_max{0, "u", "atom-max", "0000:00:20.0", 0, true, {}, {}};
	Npu rebel{1, "v", "rebel100", "0000:01:20.0", 0, true, {}, {}};
	EXPECT_EQ(resource_of(atom_max, ResourceMode::family), "rebellions.ai/ATOM");
	EXPECT_EQ(resource_of(rebel, ResourceMode::family), "rebellions.ai/REBEL");
	EXPECT_EQ(resource_of(rebel, ResourceMode::single), "rebellions.ai/npu");
	EXPECT_EQ(parse_resource_mode("npu"), ResourceMode::single);
	try {
		parse_resource_mode("gpu");
		ADD_FAILURE() << "accepted 'gpu'";
	} catch (const std::invalid_argument &e) {
		EXPECT_NE(std::string(e.what()).find("'gpu'"), std::string::npos);
		EXPECT_NE(std::string(e.what()).find("family"), std::string::npos);
	}
}

TEST(Allocation, CdiNamesAnnotationAndVisibleDevices)
{
	std::vector<Npu> npus = {{0, "uuid-a", "atom", "", 0, true, {}, {"/dev/rbln0", "/dev/accel/accel0"}},
				 {1, "uuid-b", "rebel100", "", 0, true, {}, {"/dev/rbln1", "/dev/accel/accel1"}}};
	auto r = container_allocation({"uuid-b", "uuid-a"}, npus, parse_list_strategies("cdi-cri,cdi-annotations,envvar"));
	EXPECT_EQ(r.devices_size(), 0) << "device-specs not asked for";
	ASSERT_EQ(r.cdi_devices_size(), 2);
	EXPECT_EQ(r.cdi_devices(0).name(), "rebellions.ai/npu=uuid-b");
	EXPECT_EQ(r.cdi_devices(1).name(), "rebellions.ai/npu=uuid-a");
	EXPECT_EQ(r.annotations().at(kCdiAnnotation), "rebellions.ai/npu=uuid-b,rebellions.ai/npu=uuid-a");
	EXPECT_EQ(r.envs().at("RBLN_VISIBLE_DEVICES"), "uuid-b,uuid-a");
	try {
		container_allocation({"uuid-c"}, npus, parse_list_strategies("envvar"));
		ADD_FAILURE() << "accepted an unknown device";
	} catch (const std::invalid_argument &e) {
		EXPECT_NE(std::string(e.what()).find("'uuid-c'"), std::string::npos);
		EXPECT_NE(std::string(e.what()).find("uuid-a, uuid-b"), std::string::npos);
	}
}

TEST(Allocation, DeviceSpecsNameEveryNodeAndNothingElse)
{
	std::vector<Npu> npus = {{0, "uuid-a", "atom", "", 0, true, {}, {"/dev/rbln0", "/dev/dri/renderD128"}},
				 {1, "uuid-b", "rebel100", "", 0, true, {}, {"/dev/rbln1", "/dev/dri/renderD129"}}};
	auto r = container_allocation({"uuid-b"}, npus, parse_list_strategies("device-specs"));
	ASSERT_EQ(r.devices_size(), 2);
	EXPECT_EQ(r.devices(0).host_path(), "/dev/rbln1");
	EXPECT_EQ(r.devices(0).container_path(), "/dev/rbln1");
	EXPECT_EQ(r.devices(0).permissions(), "rw");
	EXPECT_EQ(r.devices(1).host_path(), "/dev/dri/renderD129");
	EXPECT_EQ(r.cdi_devices_size(), 0);
	EXPECT_TRUE(r.annotations().empty());
	EXPECT_TRUE(r.envs().empty());
	auto env = container_allocation({"uuid-a"}, npus, parse_list_strategies("envvar"));
	EXPECT_EQ(env.devices_size(), 0);
	EXPECT_EQ(env.envs().at("RBLN_VISIBLE_DEVICES"), "uuid-a");
	EXPECT_TRUE(env.annotations().empty());
	auto annotations = container_allocation({"uuid-a"}, npus, parse_list_strategies("cdi-annotations"));
	EXPECT_EQ(annotations.annotations().at(kCdiAnnotation), "rebellions.ai/npu=uuid-a");
	EXPECT_EQ(annotations.cdi_devices_size(), 0);
}

TEST(Allocation, StrategiesParseAndBadOnesAreNamed)
{
	EXPECT_EQ(parse_list_strategies(kDefaultListStrategies), (ListStrategies{.envvar = true, .device_specs = true}));
	for (auto [bad, says] : {std::pair{"volume-mounts", "'volume-mounts'"}, {"envvar,envvar", "twice"},
				 {"", "no device-list strategy"}, {"cdi-cri,", "no device-list strategy"}}) {
		try {
			parse_list_strategies(bad);
			ADD_FAILURE() << "accepted '" << bad << "'";
		} catch (const std::invalid_argument &e) {
			EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << e.what();
		}
	}
}
