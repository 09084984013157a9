// SPDX-License-Identifier: MIT
#include "sample.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "rbln/devmgr.hpp"
#include "rbln/enumerate.hpp"

namespace rbln::exporter {

namespace fs = std::filesystem;

namespace {

// /dev/accel/accel0 -> /sys/class/accel/accel0/device; /dev/dri/renderD128 -> /sys/class/drm/...
fs::path sysfs_of(const std::string &node)
{
	const fs::path p(node);
	const std::string cls = p.parent_path().filename() == "accel" ? "accel" : "drm";
	return fs::path("/sys/class") / cls / p.filename() / "device";
}

std::optional<std::string> read_line(const fs::path &path)
{
	std::ifstream in(path);
	std::string line;
	if (!std::getline(in, line))
		return std::nullopt;
	return line;
}

uint64_t read_u64(const fs::path &path)
{
	auto s = read_line(path);
	return s ? std::stoull(*s) : 0;
}

std::vector<ChipletSample> sample_chiplets(const fs::path &dev, unsigned count)
{
	std::vector<ChipletSample> out;
	for (unsigned c = 0; c < count; c++) {
		const auto dir = dev / ("chiplet" + std::to_string(c));
		ChipletSample cs{c, read_u64(dir / "memory_used"), read_u64(dir / "memory_total"), {}};
		std::istringstream engines(read_line(dir / "engines").value_or(""));
		for (std::string e; engines >> e;)
			cs.engines.push_back({e, read_u64(dir / (e + "_busy_ns"))});
		out.push_back(std::move(cs));
	}
	return out;
}

} // namespace

std::vector<NpuSample> sample_npus()
{
	std::vector<NpuSample> out;
	for (const auto &node : rbln::list_npu_nodes()) {
		try {
			auto dev = rbln::Device::open_path(node);
			const auto &info = dev.info();
			const auto st = dev.status();	// the one ioctl with every changing figure
			out.push_back({info.index, info.uuid, info.name, info.driver_version, info.firmware_version,
				       st.status, st.temperature_mc / 1000.0, st.power_w, st.utilization,
				       st.memory_used, st.memory_total,
				       sample_chiplets(sysfs_of(node), info.chiplet_count), std::nullopt});
		} catch (const std::exception &) {
			// Removed between listing and reading: not there for this scrape.
		}
	}
	std::ranges::sort(out, {}, &NpuSample::index);
	return out;
}

} // namespace rbln::exporter
