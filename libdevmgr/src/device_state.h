// Internals shared by the library's sources: the open device and how driver
// errors become rbln::Error.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <istream>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "rbln/devmgr.hpp"
#include "syncobj.h"

RBLN_CXX_ABI_BEGIN namespace detail {

struct DeviceState {
	int fd = -1;
	DeviceInfo info;
	uint32_t uapi_version = 0;	// the driver's interface version (0: it did not say)
	PciLink pci_link{};		// DEVICE_INFO's, interface 15 (older drivers: zeros)
	mutable SyncobjPool syncobjs;	// of jobs, when the driver has them

	DeviceState() = default;
	DeviceState(const DeviceState &) = delete;
	DeviceState &operator=(const DeviceState &) = delete;
	~DeviceState();

	// ioctl() retried on EINTR; 0 or the errno.
	int ioctl(unsigned long request, void *arg) const;
	std::string name() const { return fmt::format("rbln:{}", info.index); }
	// SUBMIT's in_syncs/out_sync (interface 10, DRM_RBLN_CAP_SYNCOBJ).
	bool has_syncobjs() const;
	// SUBMIT's REPORT_END (interface 11).
	bool reports_end() const;
	// The most bytes one job may copy (interface 13; no limit before), asked once.
	uint64_t job_max_bytes() const;

	// SUBMIT's flags for a profiled job: the driver keeps its device times
	// (DRM_RBLN_SUBMIT_TIMES, interface 14), and gives those of a job that
	// ended inside SUBMIT there (REPORT_TIMES, 16).  Set at open.
	uint32_t profile_submit_flags = 0;
	// When the profiler's counters are next due, at a submit (recorder.cpp):
	// the submit path compares its placeholder time, no lock taken.
	mutable std::atomic<uint64_t> profile_sample_ns{0};

private:
	mutable std::atomic<uint64_t> job_max_bytes_{0};	// 0: not asked yet
};

[[noreturn]] void fail(int err, const std::string &message);
// Called when a node or the event family is missing, so that "no driver" is
// told apart from "no such NPU".
void fail_unless_driver_loaded(const std::string &what);	// throws Errc::driver_not_loaded
std::string errno_text(int err);
const char *engine_name(Engine engine);
std::string bytes_text(uint64_t bytes);
std::string library_path();	// the loaded librbln_devmgr file

// An rbln file as /proc/<pid>/fdinfo shows it (fdinfo.cpp).
struct FdinfoFile {
	std::optional<uint64_t> client_id;
	std::array<std::optional<uint64_t>, 4> engine_busy_ns;	// by enum drm_rbln_engine
};
std::optional<FdinfoFile> parse_fdinfo(std::istream &in);	// nullopt: not an rbln file
struct FileHolders {
	std::vector<unsigned> pids;
	std::array<std::optional<uint64_t>, 4> engine_busy_ns;
};
// Every rbln file this user may see in /proc, by drm-client-id.
std::map<uint64_t, FileHolders> rbln_files_of_processes();
std::string comm_of(unsigned pid);	// /proc/<pid>/comm; "" when gone or not readable
std::string abi_mismatch_message(const std::string &library, uint32_t built, const std::string &node,
				 const std::string &driver_release, uint32_t version, uint32_t compat);	// "16 MiB", "1.5 GiB", "4095 B"

// A switch variable: set to 1, ON, TRUE or YES (any case).
bool env_flag(const char *name);
void warn(const std::string &message);	// "libdevmgr: warning: ..." on stderr
void check_device_abi(const DeviceState &dev);	// throws Errc::abi_mismatch

// Index -> the node of each NPU found that this process can open (its accel
// or render node, or /dev/rblnN: whichever it was given), from the cached
// enumeration (enumerate.cpp).
std::map<unsigned, std::string> npu_nodes();
// NPU @index's node in @nodes, else /dev/rbln<index>.
std::string npu_node(const std::map<unsigned, std::string> &nodes, unsigned index);
// Opens @path as NPU @index (nullopt: whichever NPU it is), checking the ABI.
std::shared_ptr<DeviceState> open_node(const std::string &path, std::optional<unsigned> index);

} RBLN_CXX_ABI_END // namespace rbln::detail
