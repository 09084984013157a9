// SPDX-License-Identifier: MIT
#include "preferred.hpp"

#include <algorithm>
#include <bit>
#include <optional>
#include <set>
#include <tuple>

namespace rbln::k8s {

namespace {

// Lower is better: NUMA nodes spanned, gap in PCI order, misalignment.
using Score = std::tuple<size_t, unsigned, bool>;

Score score(const std::vector<Candidate> &set)
{
	std::set<int> nodes;
	unsigned lo = set.front().position, hi = lo;
	for (const auto &c : set) {
		nodes.insert(c.numa_node);
		lo = std::min(lo, c.position);
		hi = std::max(hi, c.position);
	}
	const size_t n = set.size();
	const bool misaligned = n > 1 && std::has_single_bit(n) && lo % n != 0;
	return {nodes.size(), hi - lo, misaligned};
}

bool holds_all(const std::vector<Candidate> &set, const std::vector<std::string> &ids)
{
	return std::ranges::all_of(ids, [&](const std::string &id) {
		return std::ranges::any_of(set, [&](const Candidate &c) { return c.id == id; });
	});
}

// When no run of neighbours holds every required device: start from those
// and add, one at a time, the device closest to the set so far.
std::vector<Candidate> grow(std::vector<Candidate> pool, const std::vector<std::string> &must_include,
			    size_t size)
{
	std::vector<Candidate> chosen;
	std::erase_if(pool, [&](const Candidate &c) {
		if (std::ranges::find(must_include, c.id) == must_include.end())
			return false;
		chosen.push_back(c);
		return true;
	});
	while (chosen.size() < size && !pool.empty()) {
		auto distance = [&](const Candidate &c) {
			bool same_node = false;
			unsigned gap = ~0u;
			for (const auto &s : chosen) {
				same_node |= s.numa_node == c.numa_node;
				gap = std::min(gap, c.position > s.position ? c.position - s.position
									   : s.position - c.position);
			}
			return std::make_tuple(!same_node, gap, c.position);
		};
		auto best = std::ranges::min_element(pool, {}, distance);
		chosen.push_back(*best);
		pool.erase(best);
	}
	return chosen;
}

} // namespace

std::vector<std::string> preferred_allocation(std::vector<Candidate> available,
					      const std::vector<std::string> &must_include, size_t size)
{
	std::ranges::sort(available, {}, [](const Candidate &c) { return std::make_pair(c.numa_node, c.position); });
	std::vector<Candidate> best;
	if (size >= available.size()) {
		best = available;
	} else if (size > 0) {
		// Runs of neighbours in (NUMA node, PCI order).
		std::optional<Score> best_score;
		for (size_t i = 0; i + size <= available.size(); i++) {
			std::vector<Candidate> run(available.begin() + i, available.begin() + i + size);
			if (!holds_all(run, must_include))
				continue;
			auto s = score(run);
			if (!best_score || s < *best_score) {
				best_score = s;
				best = std::move(run);
			}
		}
		if (!best_score)
			best = grow(available, must_include, size);
	}
	std::ranges::sort(best, {}, &Candidate::position);
	std::vector<std::string> ids;
	for (const auto &c : best)
		ids.push_back(c.id);
	return ids;
}

} // namespace rbln::k8s
