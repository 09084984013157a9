// rbln-smi topo: the die-to-die links of each NPU's chiplets as the driver
// publishes them, and (-m) the PCI path relation between NPUs, as nvidia-smi
// topo -m shows it between GPUs.  Everything is read from sysfs.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "rbln/enumerate.hpp"
#include "rbln/topology.hpp"

namespace rbln::smi {

struct TopoNpu {
	NpuInfo npu;
	std::vector<ChipletTopology> chiplets;	// read only for the chiplet view
	PciPath path;
	int numa_node;		// the NPU's numa_node attribute, -1 none
};

// The NPUs of -i (all when empty), in index order.
std::vector<TopoNpu> topo_npus(const std::vector<std::string> &ids, bool chiplets);

std::string render_chiplet_links(const std::vector<TopoNpu> &npus);
std::string render_path_matrix(const std::vector<TopoNpu> &npus);
// docs/rbln-smi-topo.schema.json
nlohmann::json chiplet_links_json(const std::vector<TopoNpu> &npus);
nlohmann::json path_matrix_json(const std::vector<TopoNpu> &npus);

} // namespace rbln::smi
