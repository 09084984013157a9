// How NPUs connect: chiplet links from sysfs, and PCI paths between NPUs
// from the real sysfs paths of their devices (rbln/topology.hpp).
#include "rbln/topology.hpp"

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <fstream>
#include <optional>
#include <regex>
#include <sstream>

#include <unistd.h>

#include <fmt/format.h>

#include "device_state.h"

RBLN_CXX_ABI_BEGIN

namespace {

namespace fs = std::filesystem;

std::optional<std::string> read_line(const std::string &path)
{
	std::ifstream in(path);
	if (!in)
		return std::nullopt;
	std::string s;
	std::getline(in, s);
	return s;
}

// "1:d2d" -> {1, "d2d"}; nullopt if it is not PEER:KIND.
std::optional<ChipletLink> parse_link(const std::string &word, unsigned chiplets)
{
	static const std::regex form("([0-9]+):([a-z0-9_]+)");
	std::smatch m;
	if (!std::regex_match(word, m, form))
		return std::nullopt;
	unsigned long peer = std::stoul(m[1].str());
	if (peer >= chiplets)
		return std::nullopt;
	return ChipletLink{unsigned(peer), m[2].str()};
}

bool is_host_bridge(const std::string &name)
{
	static const std::regex form("pci[0-9a-f]{4}:[0-9a-f]{2}");
	return std::regex_match(name, form);
}

bool is_pci_function(const std::string &name)
{
	static const std::regex form("[0-9a-f]{4}:[0-9a-f]{2}:[0-9a-f]{2}\\.[0-7]");
	return std::regex_match(name, form);
}

} // namespace

std::vector<ChipletTopology> chiplet_topology(const NpuInfo &npu)
{
	std::vector<ChipletTopology> out;
	for (unsigned c = 0; c < npu.chiplet_count; c++) {
		std::string dir = fmt::format("{}/chiplet{}", npu.sysfs, c);
		auto links = read_line(dir + "/links");
		if (!links) {
			if (::access(npu.sysfs.c_str(), F_OK) != 0)
				detail::fail(ENODEV, fmt::format("NPU {} was removed (its sysfs directory {} is gone)",
								 npu.index, npu.sysfs));
			throw Error(Errc::not_supported, ENOENT,
				    fmt::format("NPU {}: {}/links does not exist: this rbln driver does not "
						"publish chiplet links (a newer rbln.ko does)",
						npu.index, dir));
		}
		ChipletTopology t{c, {}, false};
		std::istringstream words(*links);
		for (std::string word; words >> word;) {
			auto link = parse_link(word, npu.chiplet_count);
			if (!link)
				throw Error(Errc::system, EPROTO,
					    fmt::format("NPU {}: {}/links reads '{}': '{}' is not PEER:KIND with "
							"PEER below {}",
							npu.index, dir, *links, word, npu.chiplet_count));
			t.links.push_back(*link);
		}
		std::istringstream engines(read_line(dir + "/engines").value_or(""));
		for (std::string name; engines >> name;)
			t.host_link = t.host_link || name == "external_hdma";
		out.push_back(std::move(t));
	}
	if (::access(npu.sysfs.c_str(), F_OK) != 0)
		detail::fail(ENODEV, fmt::format("NPU {} was removed (its sysfs directory {} is gone)",
						 npu.index, npu.sysfs));
	return out;
}

PciPath pci_path(const std::string &device_dir)
{
	PciPath p;
	std::error_code ec;
	fs::path real = fs::canonical(device_dir, ec);
	if (ec)
		return p;
	// pci0000:00/0000:00:1c.0/0000:01:00.0/...: the host bridge, then one
	// directory per PCI function from the root port down; the last is the
	// device's own (its children, if any, are not PCI functions).
	std::vector<std::string> functions;
	for (const auto &part : real) {
		std::string name = part.string();
		if (!p.on_pci) {
			if (is_host_bridge(name)) {
				p.on_pci = true;
				p.host_bridge = name;
			}
		} else if (is_pci_function(name)) {
			functions.push_back(name);
		} else {
			break;
		}
	}
	if (!p.on_pci || functions.empty())
		return PciPath{};
	p.function = functions.back();
	functions.pop_back();
	p.bridges = std::move(functions);
	if (auto node = read_line(real.string() + "/numa_node"))
		try {
			p.numa_node = std::stoi(*node);
		} catch (const std::exception &) {
			p.numa_node = -1;
		}
	return p;
}

PathRelation path_relation(const PciPath &a, const PciPath &b)
{
	if (!a.on_pci || !b.on_pci)
		return PathRelation::not_pci;	// the caller knows an NPU is itself
	if (a.host_bridge == b.host_bridge && a.function == b.function)
		return PathRelation::self;
	if (a.host_bridge != b.host_bridge)
		return a.numa_node == b.numa_node ? PathRelation::node : PathRelation::sys;
	auto [ia, ib] = std::mismatch(a.bridges.begin(), a.bridges.end(), b.bridges.begin(), b.bridges.end());
	if (ia == a.bridges.begin())
		return PathRelation::phb;	// they meet only at the host bridge
	// Below the last bridge they share, each side goes through at most one
	// more (a switch's downstream port): one switch, else several bridges.
	return a.bridges.end() - ia <= 1 && b.bridges.end() - ib <= 1 ? PathRelation::pix
									 : PathRelation::pxb;
}

const char *relation_name(PathRelation r)
{
	switch (r) {
	case PathRelation::self: return "X";
	case PathRelation::pix: return "PIX";
	case PathRelation::pxb: return "PXB";
	case PathRelation::phb: return "PHB";
	case PathRelation::node: return "NODE";
	case PathRelation::sys: return "SYS";
	case PathRelation::not_pci: return "SIM";
	}
	return "?";
}

const char *relation_meaning(PathRelation r)
{
	switch (r) {
	case PathRelation::self: return "Self";
	case PathRelation::sys:
		return "Connection traversing PCIe as well as the SMP interconnect between NUMA nodes";
	case PathRelation::node:
		return "Connection traversing PCIe as well as the interconnect between PCIe Host Bridges "
		       "within a NUMA node";
	case PathRelation::phb:
		return "Connection traversing PCIe as well as a PCIe Host Bridge (typically the CPU)";
	case PathRelation::pxb:
		return "Connection traversing multiple PCIe bridges (without traversing the PCIe Host "
		       "Bridge)";
	case PathRelation::pix: return "Connection traversing at most a single PCIe bridge";
	case PathRelation::not_pci:
		return "Not on PCI (a simulated NPU): there is no PCI path to compare";
	}
	return "?";
}

RBLN_CXX_ABI_END // namespace rbln
