// Counters the storm's processes share (one MAP_SHARED page set, made before
// the first fork), so a worker killed mid-operation still has its counts.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <string_view>

namespace storm {

// Every kind of operation a worker or the chaos process does.  JobEnd is
// the end of a job of the file's own as WAIT returned it (ok: it ended
// well); a WAIT that finds it still running is none.  Chain is a batch of
// jobs joined by syncobjs that went in whole, counted once its last job's
// end is known (ok: it ended well, so every job before it did).  HugeJob is
// a SUBMIT of exactly the job byte limit (ok: it went in); TimelineChain two
// jobs joined by a timeline syncobj point, counted as Chain is.  PciJobEnd
// is JobEnd on a PCI NPU (not simulated).
enum class Op : unsigned {
	Open, Close, BoCreate, BoCreateInvalid, GemClose, BoInfo, Mmap, Submit, SubmitBroken,
	SubmitBatch, Chain, Wait, JobEnd, PrimeExport, PrimeImport, Acquire, Release, ListClients,
	Reclaim, Reset, Query, ForkChild, FaultInject, DeviceAdd, DeviceRemove, HugeJob,
	TimelineChain, PciJobEnd, Count
};

constexpr std::array<std::string_view, static_cast<unsigned>(Op::Count)> kOpNames = {
	"open", "close", "bo_create", "bo_create_invalid", "gem_close", "bo_info", "mmap",
	"submit", "submit_broken", "submit_batch", "chain", "wait", "job_end", "prime_export",
	"prime_import", "acquire", "release", "list_clients", "reclaim", "reset", "query",
	"fork_child", "fault_inject", "device_add", "device_remove", "huge_job", "timeline_chain",
	"pci_job_end",
};

constexpr unsigned kMaxErrno = 256;

struct Stats {
	std::atomic<uint64_t> total[static_cast<unsigned>(Op::Count)];
	std::atomic<uint64_t> ok[static_cast<unsigned>(Op::Count)];
	std::atomic<uint64_t> errnos[kMaxErrno];	// by errno of failed operations
	// ... and by operation, so a shortfall can say what its failures were.
	std::atomic<uint64_t> op_errnos[static_cast<unsigned>(Op::Count)][kMaxErrno];
	std::atomic<uint64_t> kills;			// workers SIGKILLed by the supervisor
	std::atomic<uint64_t> sigbus;			// CPU accesses to revoked mappings
	std::atomic<uint64_t> workers_started;
	std::atomic<uint64_t> accepted_broken;		// invalid requests the driver took

	void record(Op op, int err)
	{
		total[static_cast<unsigned>(op)]++;
		if (!err)
			ok[static_cast<unsigned>(op)]++;
		else {
			unsigned e = static_cast<unsigned>(err) < kMaxErrno ? static_cast<unsigned>(err) : 0;
			errnos[e]++;
			op_errnos[static_cast<unsigned>(op)][e]++;
		}
	}

	uint64_t ok_of(Op op) const { return ok[static_cast<unsigned>(op)]; }
	uint64_t total_of(Op op) const { return total[static_cast<unsigned>(op)]; }
	uint64_t failed_with(Op op, unsigned err) const { return op_errnos[static_cast<unsigned>(op)][err]; }
};

// The shared counters; valid in every process of the storm.
Stats &stats();

}  // namespace storm
