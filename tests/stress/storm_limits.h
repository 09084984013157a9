// What a device lets a storm job do, read once per open file: its chiplets,
// each chiplet's engines, the job byte limit, and whether it is simulated.
// A PCI NPU (QEMU's edu: one chiplet, two engines, 16 KiB a job, ~40 KiB/s)
// gets small jobs and few of them at a time, so its queue drains in seconds.
#pragma once

#include <array>
#include <cstdint>

#include "rbln_drm.h"

namespace storm {

struct DeviceLimits {
	uint32_t chiplets = 1;
	std::array<uint32_t, 4> engines{};	// bit per drm_rbln_engine, of Rebel100's 4 chiplets at most
	uint64_t job_max_bytes = 0;
	bool simulated = true;

	// Below 1 MiB a job (the simulator's limit is 16 MiB) the engine is a
	// slow one: a job copies a page or two, and a file keeps one running.
	bool slow() const { return job_max_bytes < (1ULL << 20); }
	uint64_t job_bytes() const { return slow() ? 4096 : job_max_bytes / 4; }
	unsigned max_copies() const { return slow() ? 2 : 8; }
	unsigned max_pending() const { return slow() ? 1 : ~0U; }
	bool has(uint32_t chiplet, uint32_t engine) const
	{
		return chiplet < chiplets && (engines[chiplet] >> engine & 1);
	}
};

// Reads @fd's device; false if it could not (a revoked file, a removed device).
bool read_limits(int fd, DeviceLimits &out);

}  // namespace storm
