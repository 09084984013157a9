#include "pmon.hpp"

#include <algorithm>

#include <fmt/format.h>

namespace rbln::smi {

std::vector<PmonRow> PmonSampler::sample(const std::vector<ProcessUsage> &usage,
					 std::chrono::steady_clock::time_point now)
{
	std::vector<PmonRow> rows;
	std::map<Key, Last> seen;
	for (const auto &u : usage) {
		PmonRow row{u.npu, u.pid, std::nullopt, u.device_memory, u.command};
		if (u.engine_busy_ns) {
			Key key{u.npu, u.client_id, u.pid};
			auto it = last_.find(key);
			if (it != last_.end() && now > it->second.at) {
				const double window = std::chrono::duration<double, std::nano>(now - it->second.at).count();
				std::array<unsigned, 4> percent{};
				for (size_t e = 0; e < percent.size(); e++) {
					const uint64_t gained = (*u.engine_busy_ns)[e] - std::min((*u.engine_busy_ns)[e],
												 it->second.busy_ns[e]);
					percent[e] = unsigned(std::min(100.0, 100.0 * double(gained) / window + 0.5));
				}
				row.busy_percent = percent;
			}
			seen[key] = {now, *u.engine_busy_ns};
		}
		rows.push_back(std::move(row));
	}
	last_ = std::move(seen);	// processes that went are forgotten
	return rows;
}

std::string render_pmon(const std::vector<PmonRow> &rows, bool header)
{
	std::string out;
	if (header)
		out += "# npu      pid  ndma  tdma dhdma ehdma   mem command\n"
		       "# idx        #     %     %     %     %   MiB\n";
	if (rows.empty())
		out += "    -        -     -     -     -     -     - -\n";
	for (const auto &r : rows) {
		std::string busy;
		for (size_t e = 0; e < 4; e++)
			busy += r.busy_percent ? fmt::format(" {:>5}", (*r.busy_percent)[e]) : "     -";
		out += fmt::format("  {:>3} {:>8}{} {:>5} {}\n", r.npu, r.pid, busy, r.device_memory >> 20,
				   r.command);
	}
	return out;
}

} // namespace rbln::smi
