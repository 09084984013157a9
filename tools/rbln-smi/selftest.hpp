// rbln-smi selftest: a short end-to-end check of each NPU.
#pragma once

#include <string>
#include <vector>

#include "rbln/exit_codes.hpp"

namespace rbln::smi {

struct SelftestResult {
	unsigned npu;
	std::string name;
	bool passed;
	std::string detail;	// what was checked, or what failed
	ExitCode code;		// ok, or the failure's (in_use when another process holds it)
};

// For each NPU (all, or those named): open, allocate, move a pattern from the
// host through chiplet 0 to every chiplet and back, compare, free.
std::vector<SelftestResult> run_selftest(const std::vector<std::string> &ids);

} // namespace rbln::smi
