// The storm's chaos: device faults through the simulator's debugfs, devices
// added and removed while workers use them, and the kernel's
// allocation-failure injection scoped to rbln.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace storm {

// Ids the chaos process adds and removes; the devices the module was loaded
// with stay (their memory is checked after the storm).
constexpr unsigned kChaosFirstId = 8, kChaosLastId = 11;

[[noreturn]] void run_chaos(uint64_t seed, std::chrono::steady_clock::time_point deadline);

// Takes every device the chaos added away again, and clears injected faults
// on the others (hangs, chiplets down) with a forced RESET.  Returns an error
// text, empty on success.
std::string settle_devices();

// failslab and fail_page_alloc: fail PERCENT of the allocations made with
// rbln's code on the stack by tasks that set make-it-fail.  Returns an error
// text (no CONFIG_FAULT_INJECTION_DEBUG_FS, rbln not loaded), empty on success.
std::string enable_allocation_failures(unsigned percent);

// Turns injection off; returns how many allocations were failed (slab, pages).
std::pair<uint64_t, uint64_t> disable_allocation_failures();

}  // namespace storm
