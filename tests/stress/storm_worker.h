// One storm worker: random valid and invalid calls on every rbln device until
// the deadline, then it exits.  Never returns.
#pragma once

#include <chrono>
#include <cstdint>

namespace storm {

struct WorkerOptions {
	uint64_t seed;
	std::chrono::steady_clock::time_point deadline;
	bool fail_allocations;	// opt in to the kernel's allocation-failure injection
};

[[noreturn]] void run_worker(const WorkerOptions &opts);

}  // namespace storm
