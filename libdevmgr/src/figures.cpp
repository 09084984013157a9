// An NPU's changing figures from its sysfs directory (docs/sysfs.md).
#include "rbln/figures.hpp"

#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include <unistd.h>

#include <fmt/format.h>

#include "device_state.h"

RBLN_CXX_ABI_BEGIN

namespace {

std::string read_attr(const std::string &dir, const std::string &name)
{
	std::ifstream in(dir + "/" + name);
	std::string s;
	std::getline(in, s);
	return s;
}

// A missing or unreadable attribute reads as 0: the figure is unknown, not an error.
template <typename T>
T read_number(const std::string &dir, const std::string &name)
{
	std::istringstream in(read_attr(dir, name));
	T value{};
	in >> value;
	return in.fail() ? T{} : value;
}

// After reading: an NPU removed meanwhile left zeros and "" behind, which
// must not pass for its figures.
void check_still_there(const NpuInfo &npu)
{
	if (::access(npu.sysfs.c_str(), F_OK) != 0)
		detail::fail(ENODEV, fmt::format("NPU {} was removed (its sysfs directory {} is gone)",
						 npu.index, npu.sysfs));
}

std::optional<Engine> engine_named(const std::string &name)
{
	for (Engine e : {Engine::neural_dma, Engine::task_dma, Engine::device_hdma, Engine::external_hdma})
		if (name == detail::engine_name(e))
			return e;
	return std::nullopt;
}

} // namespace

std::string driver_version()
{
	return read_attr("/sys/module/rbln", "version");
}

PciLink npu_pci_link(const NpuInfo &npu)
{
	return {read_number<uint32_t>(npu.sysfs, "pci_link_speed_mts"),
		read_number<uint32_t>(npu.sysfs, "pci_link_width")};
}

NpuFigures npu_figures(const NpuInfo &npu)
{
	const std::string &d = npu.sysfs;
	std::string pstate = read_attr(d, "pstate");
	NpuFigures f{read_attr(d, "firmware_version"), read_number<int>(d, "numa_node"), {}, {}};
	f.status = DeviceStatus{
		.status = read_attr(d, "status"),
		.temperature_mc = read_number<int>(d, "temperature"),
		.power_w = double(read_number<uint64_t>(d, "power_draw")) / 1e6,
		.pstate = pstate.starts_with("P") ? unsigned(std::atoi(pstate.c_str() + 1)) : 0,
		.utilization = read_number<unsigned>(d, "utilization"),
		.memory_total = read_number<uint64_t>(d, "memory_total"),
		.memory_used = read_number<uint64_t>(d, "memory_used"),
		.memory_placed = read_number<uint64_t>(d, "memory_placed"),
		.busy_ns = read_number<uint64_t>(d, "busy_ns"),
	};
	f.counters = {read_number<uint64_t>(d, "faults"), read_number<uint64_t>(d, "memory_errors"),
		      read_number<uint64_t>(d, "engine_resets")};
	check_still_there(npu);
	return f;
}

std::vector<ChipletFigures> chiplet_figures(const NpuInfo &npu)
{
	std::vector<ChipletFigures> out;
	for (unsigned c = 0; c < npu.chiplet_count; c++) {
		std::string cd = fmt::format("{}/chiplet{}", npu.sysfs, c);
		ChipletFigures cf{c,
				  {read_number<uint64_t>(cd, "memory_total"), read_number<uint64_t>(cd, "memory_used"),
				   read_number<uint64_t>(cd, "memory_placed")},
				  {},
				  read_number<unsigned>(cd, "engine_resets"), read_attr(cd, "status") == "lost"};
		std::istringstream engines(read_attr(cd, "engines"));
		for (std::string name; engines >> name;)
			if (auto e = engine_named(name))
				cf.engines.push_back({*e, name, read_number<uint64_t>(cd, name + "_busy_ns")});
		out.push_back(std::move(cf));
	}
	check_still_there(npu);
	return out;
}

RBLN_CXX_ABI_END // namespace rbln
