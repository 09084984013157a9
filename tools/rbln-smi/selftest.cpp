#include "selftest.hpp"

#include <chrono>
#include <cstring>

#include <fmt/format.h>

#include "rbln/devmgr.hpp"
#include "rbln/enumerate.hpp"

namespace rbln::smi {

static constexpr uint64_t kBytes = 1 << 20;

static std::string check_device(const NpuInfo &npu)
{
	auto start = std::chrono::steady_clock::now();
	auto dev = Device::open_path(npu.node);
	auto in = dev.allocate_host(kBytes), out = dev.allocate_host(kBytes);
	auto c0 = dev.allocate(kBytes, Placement::on_chiplet(0));
	for (uint64_t i = 0; i < kBytes; i++)
		in.map()[i] = std::byte(i * 131 + 7);

	dev.submit(Engine::external_hdma, 0, {{in, c0, 0, 0, kBytes}}, "selftest upload").wait();
	for (uint32_t c = 1; c < npu.chiplet_count; c++) {
		auto there = dev.allocate(kBytes, Placement::on_chiplet(c));
		auto back = dev.allocate(kBytes, Placement::on_chiplet(0));
		dev.submit(Engine::task_dma, 0, {{c0, there, 0, 0, kBytes}}, "selftest scatter").wait();
		dev.submit(Engine::task_dma, 0, {{there, back, 0, 0, kBytes}}, "selftest gather").wait();
		c0 = std::move(back);
	}
	dev.submit(Engine::external_hdma, 0, {{c0, out, 0, 0, kBytes}}, "selftest download").wait();
	if (std::memcmp(in.map().data(), out.map().data(), kBytes) != 0)
		throw std::runtime_error("data came back different");

	auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() -
									start).count();
	return fmt::format("{} chiplet(s), {} MiB round trip intact, {} ms", npu.chiplet_count,
			   kBytes >> 20, ms);
}

std::vector<SelftestResult> run_selftest(const std::vector<std::string> &ids)
{
	std::vector<NpuInfo> npus;
	if (ids.empty())
		npus = enumerate_npus();
	else
		for (const auto &id : ids)
			npus.push_back(find_npu(id));
	std::vector<SelftestResult> results;
	for (const auto &npu : npus) {
		try {
			results.push_back({npu.index, npu.name, true, check_device(npu), ExitCode::ok});
		} catch (const std::exception &e) {
			results.push_back({npu.index, npu.name, false, e.what(), exit_code(e)});
		}
	}
	return results;
}

} // namespace rbln::smi
