// rbln-smi pmon: per process, each engine's busy share over the last interval
// and the device memory of its files, one line per process per NPU, as
// nvidia-smi pmon shows GPUs' processes.
#pragma once

#include <array>
#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "rbln/figures.hpp"

namespace rbln::smi {

struct PmonRow {
	unsigned npu;
	unsigned pid;
	std::optional<std::array<unsigned, 4>> busy_percent;	// unset: first sample, or no fdinfo
	uint64_t device_memory;
	std::string command;
};

// Turns successive process_usage() samples into busy shares: an engine's busy
// time gained since the previous sample over the time between them.
class PmonSampler {
public:
	std::vector<PmonRow> sample(const std::vector<ProcessUsage> &usage,
				    std::chrono::steady_clock::time_point now);

private:
	using Key = std::tuple<unsigned, uint64_t, unsigned>;	// npu, client, pid
	struct Last {
		std::chrono::steady_clock::time_point at;
		std::array<uint64_t, 4> busy_ns;
	};
	std::map<Key, Last> last_;
};

std::string render_pmon(const std::vector<PmonRow> &rows, bool header);

} // namespace rbln::smi
