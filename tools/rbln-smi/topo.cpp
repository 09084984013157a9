#include "topo.hpp"

#include <algorithm>
#include <cctype>
#include <fstream>

#include <fmt/format.h>

namespace rbln::smi {

std::vector<TopoNpu> topo_npus(const std::vector<std::string> &ids, bool chiplets)
{
	std::vector<NpuInfo> found;
	if (ids.empty())
		found = enumerate_npus();
	for (const auto &id : ids) {
		NpuInfo n = find_npu(id);
		if (std::none_of(found.begin(), found.end(), [&](auto &x) { return x.index == n.index; }))
			found.push_back(n);
	}
	std::sort(found.begin(), found.end(), [](auto &a, auto &b) { return a.index < b.index; });
	std::vector<TopoNpu> out;
	for (auto &n : found) {
		int numa_node = -1;
		std::ifstream(n.sysfs + "/numa_node") >> numa_node;
		TopoNpu t{n, {}, pci_path(n.sysfs), numa_node};
		if (chiplets)
			t.chiplets = chiplet_topology(n);
		out.push_back(std::move(t));
	}
	return out;
}

namespace {

std::string upper(std::string s)
{
	for (char &c : s)
		c = char(std::toupper(static_cast<unsigned char>(c)));
	return s;
}

const ChipletLink *link_between(const ChipletTopology &c, unsigned peer)
{
	for (const auto &l : c.links)
		if (l.peer == peer)
			return &l;
	return nullptr;
}

// Chiplets without the host link reach the host through one that has it.
std::string host_cell(const std::vector<ChipletTopology> &chiplets, const ChipletTopology &c)
{
	if (c.host_link)
		return "EHDMA";
	for (const auto &h : chiplets)
		if (h.host_link)
			return fmt::format("via C{}", h.index);
	return "-";
}

PathRelation relation_of(const TopoNpu &a, const TopoNpu &b)
{
	return a.npu.index == b.npu.index ? PathRelation::self : path_relation(a.path, b.path);
}

constexpr PathRelation kLegend[] = {PathRelation::self, PathRelation::sys,  PathRelation::node,
				    PathRelation::phb,	PathRelation::pxb,  PathRelation::pix,
				    PathRelation::not_pci};

} // namespace

std::string render_chiplet_links(const std::vector<TopoNpu> &npus)
{
	std::string out;
	for (const auto &t : npus) {
		out += fmt::format("NPU {} {} ({}, NUMA node {})\n", t.npu.index, t.npu.name, t.npu.pci_bus_id,
				   t.numa_node);
		out += "       ";
		for (const auto &c : t.chiplets)
			out += fmt::format("{:>7}", fmt::format("C{}", c.index));
		out += fmt::format("{:>8}\n", "Host");
		for (const auto &r : t.chiplets) {
			out += fmt::format("  {:<5}", fmt::format("C{}", r.index));
			for (const auto &c : t.chiplets) {
				const ChipletLink *l = link_between(r, c.index);
				out += fmt::format("{:>7}", r.index == c.index ? "X" : l ? upper(l->kind) : "-");
			}
			out += fmt::format("{:>8}\n", host_cell(t.chiplets, r));
		}
		out += "\n";
	}
	out += "Legend: D2D die-to-die link (UCIe) as the driver declares it (chipletN/links);\n"
	       "- no direct link; EHDMA External HDMA, the host link, on the chiplets that have it:\n"
	       "the others reach the host through one of them.\n";
	return out;
}

std::string render_path_matrix(const std::vector<TopoNpu> &npus)
{
	std::string out = "      ";
	for (const auto &t : npus)
		out += fmt::format("{:>7}", fmt::format("NPU{}", t.npu.index));
	out += "  NUMA Affinity  PCI Bus Id\n";
	for (const auto &a : npus) {
		out += fmt::format("{:<6}", fmt::format("NPU{}", a.npu.index));
		for (const auto &b : npus)
			out += fmt::format("{:>7}", relation_name(relation_of(a, b)));
		std::string numa = a.numa_node >= 0 ? std::to_string(a.numa_node) : "N/A";
		out += fmt::format("  {:<13}  {}\n", numa, a.path.on_pci ? a.path.function : "(not on PCI)");
	}
	out += "\nLegend:\n\n";
	for (PathRelation r : kLegend)
		out += fmt::format("  {:<4} = {}\n", relation_name(r), relation_meaning(r));
	return out;
}

nlohmann::json chiplet_links_json(const std::vector<TopoNpu> &npus)
{
	nlohmann::json list = nlohmann::json::array();
	for (const auto &t : npus) {
		nlohmann::json chiplets = nlohmann::json::array();
		for (const auto &c : t.chiplets) {
			nlohmann::json links = nlohmann::json::array();
			for (const auto &l : c.links)
				links.push_back({{"peer", l.peer}, {"kind", l.kind}});
			chiplets.push_back({{"chiplet", c.index}, {"links", links}, {"host_link", c.host_link}});
		}
		list.push_back({{"npu", t.npu.index}, {"name", t.npu.name}, {"chiplets", chiplets}});
	}
	return {{"schema_version", 1}, {"view", "chiplets"}, {"npus", list}};
}

nlohmann::json path_matrix_json(const std::vector<TopoNpu> &npus)
{
	nlohmann::json list = nlohmann::json::array();
	for (const auto &a : npus) {
		nlohmann::json relations = nlohmann::json::array();
		for (const auto &b : npus)
			relations.push_back({{"npu", b.npu.index}, {"relation", relation_name(relation_of(a, b))}});
		nlohmann::json pci = nullptr;
		if (a.path.on_pci)
			pci = {{"function", a.path.function},
			       {"host_bridge", a.path.host_bridge},
			       {"bridges", a.path.bridges},
			       {"numa_node", a.path.numa_node}};
		list.push_back({{"npu", a.npu.index},
				{"numa_node", a.numa_node},
				{"pci", pci},
				{"relations", relations}});
	}
	nlohmann::json legend = nlohmann::json::object();
	for (PathRelation r : kLegend)
		legend[relation_name(r)] = relation_meaning(r);
	return {{"schema_version", 1}, {"view", "matrix"}, {"npus", list}, {"legend", legend}};
}

} // namespace rbln::smi
