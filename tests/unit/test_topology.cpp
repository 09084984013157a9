// The PCI path relation (nvidia-smi topo -m's legend) and the chiplet links
// reader, over fake sysfs trees laid out as the kernel lays out real ones:
// /sys/devices/pci<domain>:<bus>/<root port>/<switch ports>.../<device>, and
// /sys/class/... symlinks into it.
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>
#include <unistd.h>

#include "rbln/devmgr.hpp"
#include "rbln/topology.hpp"

namespace fs = std::filesystem;
using rbln::PathRelation;

namespace {

class FakeSysfs : public ::testing::Test {
protected:
	void SetUp() override
	{
		char tmpl[] = "/tmp/rbln-topo-XXXXXX";
		ASSERT_NE(mkdtemp(tmpl), nullptr);
		root_ = tmpl;
	}
	void TearDown() override { fs::remove_all(root_); }

	// A device at @path below devices/ with its numa_node, reached as
	// class/accel/<name>/device (a symlink, as sysfs has it); returns that link.
	std::string device(const std::string &name, const std::string &path, int numa_node)
	{
		fs::path dir = root_ / "devices" / path;
		fs::create_directories(dir);
		std::ofstream(dir / "numa_node") << numa_node << "\n";
		fs::path cls = root_ / "class/accel" / name;
		fs::create_directories(cls);
		fs::create_directory_symlink(dir, cls / "device");
		return (cls / "device").string();
	}

	PathRelation relation(const std::string &a, const std::string &b)
	{
		PathRelation ab = rbln::path_relation(rbln::pci_path(a), rbln::pci_path(b));
		EXPECT_EQ(ab, rbln::path_relation(rbln::pci_path(b), rbln::pci_path(a))) << "symmetric";
		return ab;
	}

	fs::path root_;
};

} // namespace

TEST_F(FakeSysfs, PciPathIsTheChainOfBridgesBelowTheHostBridge)
{
	auto npu = device("accel0", "pci0000:00/0000:00:02.0/0000:01:00.0/0000:02:01.0/0000:03:00.0", 1);
	rbln::PciPath p = rbln::pci_path(npu);
	EXPECT_TRUE(p.on_pci);
	EXPECT_EQ(p.host_bridge, "pci0000:00");
	EXPECT_EQ(p.bridges, (std::vector<std::string>{"0000:00:02.0", "0000:01:00.0", "0000:02:01.0"}));
	EXPECT_EQ(p.function, "0000:03:00.0");
	EXPECT_EQ(p.numa_node, 1);
}

TEST_F(FakeSysfs, AChildOfThePciFunctionIsThatFunction)
{
	// e.g. a DRM node's device directory below the PCI device
	auto npu = device("accel0", "pci0000:00/0000:00:02.0/0000:01:00.0/rbln/rbln0", 0);
	rbln::PciPath p = rbln::pci_path(npu);
	EXPECT_TRUE(p.on_pci);
	EXPECT_EQ(p.function, "0000:01:00.0");
	EXPECT_EQ(p.bridges, std::vector<std::string>{"0000:00:02.0"});
}

TEST_F(FakeSysfs, DifferentRootPortsOfOneHostBridgeArePhb)
{
	auto a = device("accel0", "pci0000:00/0000:00:02.0/0000:01:00.0", 0);
	auto b = device("accel1", "pci0000:00/0000:00:02.1/0000:02:00.0", 0);
	EXPECT_EQ(relation(a, b), PathRelation::phb);
}

TEST_F(FakeSysfs, OneSwitchIsPix)
{
	// root port 00:02.0, switch upstream port 01:00.0, downstream ports 02:00.0 and 02:01.0
	auto a = device("accel0", "pci0000:00/0000:00:02.0/0000:01:00.0/0000:02:00.0/0000:03:00.0", 0);
	auto b = device("accel1", "pci0000:00/0000:00:02.0/0000:01:00.0/0000:02:01.0/0000:04:00.0", 0);
	EXPECT_EQ(relation(a, b), PathRelation::pix);
}

TEST_F(FakeSysfs, SwitchesBehindOneSwitchArePxb)
{
	const std::string top = "pci0000:00/0000:00:02.0/0000:01:00.0";	// root port, upper switch
	auto a = device("accel0", top + "/0000:02:00.0/0000:03:00.0/0000:04:00.0/0000:05:00.0", 0);
	auto b = device("accel1", top + "/0000:02:01.0/0000:06:00.0/0000:07:00.0/0000:08:00.0", 0);
	auto c = device("accel2", top + "/0000:02:02.0/0000:09:00.0", 0);	// on the upper switch itself
	EXPECT_EQ(relation(a, b), PathRelation::pxb);
	EXPECT_EQ(relation(a, c), PathRelation::pxb);
	// Both on one lower switch: one switch apart, whatever is above it.
	auto d = device("accel3", top + "/0000:02:00.0/0000:03:00.0/0000:04:01.0/0000:0a:00.0", 0);
	EXPECT_EQ(relation(a, d), PathRelation::pix);
}

TEST_F(FakeSysfs, SwitchesOnDifferentRootPortsArePhb)
{
	auto a = device("accel0", "pci0000:00/0000:00:02.0/0000:01:00.0/0000:02:00.0/0000:03:00.0", 0);
	auto b = device("accel1", "pci0000:00/0000:00:03.0/0000:04:00.0/0000:05:00.0/0000:06:00.0", 0);
	EXPECT_EQ(relation(a, b), PathRelation::phb);
}

TEST_F(FakeSysfs, HostBridgesOfOneNumaNodeAreNodeAndOfTwoAreSys)
{
	auto a = device("accel0", "pci0000:00/0000:00:02.0/0000:01:00.0", 0);
	auto b = device("accel1", "pci0000:40/0000:40:01.0/0000:41:00.0", 0);
	auto c = device("accel2", "pci0000:80/0000:80:01.0/0000:81:00.0", 1);
	EXPECT_EQ(relation(a, b), PathRelation::node);
	EXPECT_EQ(relation(a, c), PathRelation::sys);
	EXPECT_EQ(relation(b, c), PathRelation::sys);
	// A same bus number in another PCI domain is another host bridge.
	auto d = device("accel3", "pci0001:00/0001:00:02.0/0001:01:00.0", 1);
	EXPECT_EQ(relation(c, d), PathRelation::node);
}

// QEMU's main host bridge has no NUMA node (-1) while its expander bridges
// have one: across host bridges, an unknown node is not claimed local.
TEST_F(FakeSysfs, AnUnknownNodeAcrossHostBridgesIsSys)
{
	auto a = device("accel0", "pci0000:00/0000:00:10.0/0000:01:00.0", -1);
	auto b = device("accel1", "pci0000:40/0000:40:00.0/0000:41:00.0", 0);
	auto c = device("accel2", "pci0000:60/0000:60:00.0/0000:61:00.0", -1);
	EXPECT_EQ(relation(a, b), PathRelation::sys);
	EXPECT_EQ(relation(a, c), PathRelation::node) << "no NUMA information at all: one node";
}

TEST_F(FakeSysfs, TheSameFunctionIsSelf)
{
	auto a = device("accel0", "pci0000:00/0000:00:02.0/0000:01:00.0", 0);
	fs::create_directory_symlink(root_ / "devices/pci0000:00/0000:00:02.0/0000:01:00.0", root_ / "other");
	EXPECT_EQ(relation(a, (root_ / "other").string()), PathRelation::self);
}

TEST_F(FakeSysfs, ADeviceNotOnPciHasNoRelation)
{
	auto sim = device("accel0", "rbln_sim/rbln_sim0", 0);
	auto pci = device("accel1", "pci0000:00/0000:00:02.0/0000:01:00.0", 0);
	auto sim2 = device("accel2", "rbln_sim/rbln_sim1", 0);
	EXPECT_FALSE(rbln::pci_path(sim).on_pci);
	EXPECT_EQ(relation(sim, pci), PathRelation::not_pci);
	EXPECT_EQ(relation(sim, sim2), PathRelation::not_pci) << "two simulated NPUs share no PCI path";
	EXPECT_FALSE(rbln::pci_path((root_ / "nonexistent").string()).on_pci);
}

TEST(PathRelationNames, AsNvidiaSmiShowsThem)
{
	EXPECT_STREQ(rbln::relation_name(PathRelation::self), "X");
	EXPECT_STREQ(rbln::relation_name(PathRelation::pix), "PIX");
	EXPECT_STREQ(rbln::relation_name(PathRelation::pxb), "PXB");
	EXPECT_STREQ(rbln::relation_name(PathRelation::phb), "PHB");
	EXPECT_STREQ(rbln::relation_name(PathRelation::node), "NODE");
	EXPECT_STREQ(rbln::relation_name(PathRelation::sys), "SYS");
	EXPECT_STREQ(rbln::relation_name(PathRelation::not_pci), "SIM");
}

// chipletN/links as rbln.ko writes it.
class FakeNpu : public FakeSysfs {
protected:
	rbln::NpuInfo npu(const std::vector<std::string> &links, unsigned chiplets)
	{
		fs::path dir = root_ / "npu";
		for (unsigned c = 0; c < chiplets; c++) {
			fs::create_directories(dir / ("chiplet" + std::to_string(c)));
			std::ofstream(dir / ("chiplet" + std::to_string(c)) / "engines")
				<< (c ? "neural_dma task_dma device_hdma\n" : "neural_dma task_dma device_hdma external_hdma\n");
			if (c < links.size())
				std::ofstream(dir / ("chiplet" + std::to_string(c)) / "links") << links[c] << "\n";
		}
		rbln::NpuInfo n{};
		n.index = 3;
		n.sysfs = dir.string();
		n.chiplet_count = chiplets;
		return n;
	}
};

TEST_F(FakeNpu, LinksAreReadAsWritten)
{
	auto t = rbln::chiplet_topology(npu({"1:d2d 2:d2d", "0:d2d", "0:d2d", ""}, 4));
	ASSERT_EQ(t.size(), 4u);
	ASSERT_EQ(t[0].links.size(), 2u);
	EXPECT_EQ(t[0].links[0].peer, 1u);
	EXPECT_EQ(t[0].links[1].peer, 2u);
	EXPECT_EQ(t[0].links[1].kind, "d2d");
	EXPECT_TRUE(t[0].host_link);
	EXPECT_FALSE(t[1].host_link);
	EXPECT_TRUE(t[3].links.empty()) << "an unlinked chiplet stays unlinked";
}

TEST_F(FakeNpu, ABadLinksLineNamesTheFileAndTheWord)
{
	try {
		rbln::chiplet_topology(npu({"1:d2d 7:d2d"}, 2));
		FAIL() << "a peer past the chiplets was accepted";
	} catch (const rbln::Error &e) {
		EXPECT_EQ(e.code(), rbln::Errc::system);
		EXPECT_NE(std::string(e.what()).find("chiplet0/links reads '1:d2d 7:d2d': '7:d2d'"), std::string::npos)
			<< e.what();
	}
}

TEST_F(FakeNpu, ADriverWithoutLinksIsNotSupported)
{
	try {
		rbln::chiplet_topology(npu({}, 1));
		FAIL() << "missing links read as none";
	} catch (const rbln::Error &e) {
		EXPECT_EQ(e.code(), rbln::Errc::not_supported) << e.what();
	}
}
