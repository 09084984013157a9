// SPDX-License-Identifier: MIT
#include "sample.hpp"

#include <algorithm>
#include <cerrno>

#include "rbln/devmgr.hpp"
#include "rbln/enumerate.hpp"
#include "rbln/figures.hpp"

namespace rbln::exporter {

namespace {

NpuSample sample(const rbln::NpuInfo &npu, const std::string &driver_version)
{
	NpuSample s{npu.index, npu.uuid, npu.name, driver_version, {}, npu.status, 0, 0, 0, 0, npu.memory_total,
		    0, 0, 0, {}, std::nullopt, std::nullopt};
	const auto f = rbln::npu_figures(npu);
	if (f.status.status.empty()) {
		s.error = "status unreadable";
		return s;
	}
	s.firmware_version = f.firmware_version;
	s.status = f.status.status;
	s.temperature_c = f.status.temperature_mc / 1000.0;
	s.power_w = f.status.power_w;
	s.utilization = f.status.utilization;
	s.memory_used = f.status.memory_used;
	s.memory_total = f.status.memory_total;
	s.faults = f.counters.faults;
	s.memory_errors = f.counters.memory_errors;
	s.engine_resets = f.counters.engine_resets;
	for (const auto &c : rbln::chiplet_figures(npu)) {
		ChipletSample cs{c.index, c.memory.used, c.memory.total, {}, c.engine_resets, c.lost};
		for (const auto &e : c.engines)
			cs.engines.push_back({e.name, e.busy_ns});
		s.chiplets.push_back(std::move(cs));
	}
	return s;
}

} // namespace

std::vector<NpuSample> sample_npus()
{
	std::vector<NpuSample> out;
	const std::string driver = rbln::driver_version();
	for (const auto &npu : rbln::enumerate_all_npus()) {
		try {
			out.push_back(sample(npu, driver));
		} catch (const rbln::Error &e) {
			if (e.code() == rbln::Errc::no_device)
				continue;	// removed between listing and reading
			NpuSample s{npu.index, npu.uuid, npu.name, driver, {}, npu.status, 0, 0, 0, 0,
				    npu.memory_total, 0, 0, 0, {}, std::nullopt, e.what()};
			out.push_back(std::move(s));
		} catch (const std::exception &e) {
			NpuSample s{npu.index, npu.uuid, npu.name, driver, {}, npu.status, 0, 0, 0, 0,
				    npu.memory_total, 0, 0, 0, {}, std::nullopt, e.what()};
			out.push_back(std::move(s));
		}
	}
	std::ranges::sort(out, {}, &NpuSample::index);
	return out;
}

} // namespace rbln::exporter
