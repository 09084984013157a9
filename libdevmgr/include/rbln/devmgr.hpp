// SPDX-License-Identifier: MIT
// libdevmgr C++ API: RAII devices, buffers and jobs over the rbln driver.
//
//   auto dev = rbln::Device::open(0);
//   auto host = dev.allocate_host(1 << 20);
//   auto vram = dev.allocate(1 << 20, rbln::Placement::on_chiplet(0));
//   std::ranges::fill(host.map(), std::byte{42});
//   dev.submit(rbln::Engine::external_hdma, 0, {{host, vram, 0, 0, 1 << 20}}, "upload")
//       .wait();
//
// Jobs can wait for other jobs, of this device or another, without a round
// trip through the caller: dev.submit(engine, chiplet, copies, label, {job1, job2}),
// and several jobs go in with one system call: dev.submit_batch(jobs).
//
// Failures throw rbln::Error, whose code() is a stable rbln::Errc (the C
// API's rbln_status) and whose what() names the device, size and cause.
#pragma once

#include "abi_namespace.hpp"

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "devmgr.h"

RBLN_CXX_ABI_BEGIN namespace detail {
// internal: declared before the exported part so they stay hidden
struct DeviceState;
struct JobState;
class Submission;
} RBLN_CXX_ABI_END

// The C++ API is exported (the library builds with -fvisibility=hidden).
#pragma GCC visibility push(default)
RBLN_CXX_ABI_BEGIN

enum class Errc : int {
	ok = RBLN_OK,
	invalid_argument = RBLN_ERR_INVALID_ARGUMENT,
	not_found = RBLN_ERR_NOT_FOUND,
	no_device = RBLN_ERR_NO_DEVICE,
	permission = RBLN_ERR_PERMISSION,
	device_memory = RBLN_ERR_DEVICE_MEMORY,
	host_memory = RBLN_ERR_HOST_MEMORY,
	busy = RBLN_ERR_BUSY,
	timeout = RBLN_ERR_TIMEOUT,
	engine_hung = RBLN_ERR_ENGINE_HUNG,
	job_failed = RBLN_ERR_JOB_FAILED,
	canceled = RBLN_ERR_CANCELED,
	system = RBLN_ERR_SYSTEM,
	abi_mismatch = RBLN_ERR_ABI_MISMATCH,
	driver_not_loaded = RBLN_ERR_DRIVER_NOT_LOADED,
	not_supported = RBLN_ERR_NOT_SUPPORTED,
};

class Error : public std::runtime_error {
public:
	Error(Errc code, int sys_errno, const std::string &message)
		: std::runtime_error(message), code_(code), errno_(sys_errno) {}
	Errc code() const noexcept { return code_; }
	int sys_errno() const noexcept { return errno_; }

private:
	Errc code_;
	int errno_;
};

// The code an errno from the driver stands for.
Errc errc_from_errno(int err) noexcept;

// The interface version of rbln_drm.h this library was built against.
uint32_t built_uapi_version() noexcept;

// Whether a driver that implements interface @driver_version and still
// accepts consumers down to @driver_compat suits a library built against
// @built.  Unset numbers (an older driver) pass, with a warning.
struct AbiVerdict {
	bool ok;
	std::string warning;	// set when ok but worth saying
};
AbiVerdict check_abi(uint32_t built, std::optional<uint32_t> driver_version,
		     std::optional<uint32_t> driver_compat);

enum class Engine : uint32_t {
	neural_dma = RBLN_ENGINE_NEURAL_DMA,
	task_dma = RBLN_ENGINE_TASK_DMA,
	device_hdma = RBLN_ENGINE_DEVICE_HDMA,
	external_hdma = RBLN_ENGINE_EXTERNAL_HDMA,
};

// Where device memory goes: one chiplet, or spread over all.
class Placement {
public:
	static Placement on_chiplet(uint32_t chiplet) { return Placement(chiplet); }
	static Placement interleaved() { return Placement(RBLN_CHIPLET_INTERLEAVED); }
	uint32_t chiplet() const { return chiplet_; }

private:
	explicit Placement(uint32_t chiplet) : chiplet_(chiplet) {}
	uint32_t chiplet_;
};

enum class AllocMode { lazy, eager };

// The PCIe link an NPU sits behind (a conventional PCI board: its upstream
// port's).  0: unknown (simulated NPUs, drivers before interface 15).
struct PciLink {
	uint32_t speed_mts;	// transfer rate per lane, MT/s: 2500 is 2.5 GT/s
	uint32_t width;		// lanes
};

struct DeviceInfo {
	uint32_t index;
	uint32_t chiplet_count;
	int numa_node;
	uint64_t memory_total;
	uint64_t capabilities;
	std::string name, uuid, pci_bus_id, serial, firmware_version, driver_version;
	std::string node;	// the path that was opened
};

// The changing figures of a device, read in one call.
struct DeviceStatus {
	std::string status;	// READY, BUSY, INIT, FAULT, FINISH
	int temperature_mc;
	double power_w;
	unsigned pstate;
	unsigned utilization;	// percent
	uint64_t memory_total, memory_used, memory_placed;
	uint64_t busy_ns;
};

struct MemoryUsage {
	uint64_t total, used, placed;
};

struct ClientUsage {
	uint64_t client_id;
	uint64_t memory_total, memory_resident, device_memory;
	uint64_t engine_busy_ns[4];
};

// An open file of a device, as the driver lists it.
struct ClientInfo {
	uint64_t client_id;
	unsigned creator_pid;	// 0 when not visible from here
	unsigned uid;
	std::string creator_comm;
	bool acquired;		// holds the device
	bool stale;		// its creator has exited but the file lives on
	bool self;		// this Device's own file
	bool revoked;		// reclaimed
	uint64_t device_memory;
	std::chrono::nanoseconds idle;
};

// Processes that hold client @client_id's file now (an fd of theirs shows its
// drm-client-id in /proc/<pid>/fdinfo).  Empty where the kernel has no DRM
// fdinfo (DRM_RBLN_CAP_FDINFO) or the holders are not visible to this user.
std::vector<unsigned> client_holder_pids(uint64_t client_id);

class Buffer {
public:
	Buffer(Buffer &&) noexcept;
	Buffer &operator=(Buffer &&) noexcept;
	~Buffer();

	uint32_t handle() const { return handle_; }
	uint64_t size() const { return size_; }
	uint64_t device_address() const { return device_address_; }
	bool host() const { return host_; }
	// CPU view, mapped on first use (which places a lazy buffer).
	std::span<std::byte> map();
	// A dma-buf fd for another device or process; the caller owns it.
	int export_fd() const;

private:
	// Internal, so not exported: only the library constructs and frees buffers.
	friend class Device;
	__attribute__((visibility("hidden"))) Buffer(std::shared_ptr<detail::DeviceState> dev,
						     uint32_t handle, bool host);
	__attribute__((visibility("hidden"))) void reset() noexcept; // unmap and free
	std::shared_ptr<detail::DeviceState> dev_;
	uint32_t handle_ = 0;
	uint64_t size_ = 0, device_address_ = 0, mmap_offset_ = 0;
	bool host_ = false;
	std::byte *map_ = nullptr;
};

struct Copy {
	const Buffer &src;
	const Buffer &dst;
	uint64_t src_offset;
	uint64_t dst_offset;
	uint64_t size;
};

// A submitted job.  Copies share it and are cheap; the job runs to its end
// whether or not any copy is left.
class Job {
public:
	uint64_t seqno() const { return seqno_; }
	// Waits for the job; throws on timeout (Errc::timeout, the job keeps
	// running) and on the job's failure (engine_hung, job_failed, ...).
	// A failure is reported once; later waits return normally.
	void wait(std::chrono::nanoseconds timeout = std::chrono::seconds(60)) const;
	// True once finished successfully; throws if it failed.
	bool done() const;
	// A new sync_file fd for the job (the caller closes it): poll() and epoll
	// report POLLIN once the job has ended, successfully or not.  Throws
	// Errc::not_supported on drivers without syncobjs (interface < 10).
	int fd() const;

private:
	friend class detail::Submission;
	Job(std::shared_ptr<detail::JobState> state, uint64_t seqno, Engine engine, uint32_t chiplet)
		: state_(std::move(state)), seqno_(seqno), engine_(engine), chiplet_(chiplet) {}
	// Waits; returns false on timeout, throws if the job failed.
	bool wait_for(std::chrono::nanoseconds timeout) const;
	// The layout of the first release (a shared_ptr, then these), which
	// binaries built against it have inlined.
	std::shared_ptr<detail::JobState> state_;
	uint64_t seqno_;
	Engine engine_;
	uint32_t chiplet_;
};

// One job of a batch (Device::submit_batch): what submit() takes, and the
// jobs of the same batch before it that it waits for, by their place in it.
struct JobSpec {
	Engine engine;
	uint32_t chiplet;
	std::span<const Copy> copies;
	std::string_view label = {};
	std::span<const Job> after = {};		// jobs submitted earlier, any device
	std::span<const uint32_t> after_batch = {};	// earlier jobs of this batch
};

class Device {
public:
	// NPU <index> through the node this process can open: its accel or
	// render node, or /dev/rbln<index>, whichever it was given.
	static Device open(unsigned index);
	// Any node path: /dev/accel/accel0, /dev/rbln/by-uuid/<uuid>, ...
	static Device open_path(const std::string &path);

	const DeviceInfo &info() const;
	// "rbln:N", the name messages use.
	std::string name() const;
	int fd() const;
	uint64_t param(uint32_t param, std::optional<uint32_t> chiplet = std::nullopt) const;
	MemoryUsage memory(std::optional<uint32_t> chiplet = std::nullopt) const;
	DeviceStatus status() const;
	// From DEVICE_INFO (interface 15); zeros from older drivers.
	PciLink pci_link() const;
	ClientUsage usage() const;

	// Exclusive use of the device by this open file (until release() or
	// close).  Throws Errc::busy naming the holder: pid, command, stale or not.
	void acquire();
	void release();
	// Open files of the device: all of them as root, else the caller's user's.
	std::vector<ClientInfo> clients() const;
	// Revokes a stale client (force: any client, root only); returns the
	// device memory freed.  Its file then gets ENODEV, its mappings SIGBUS.
	uint64_t reclaim(uint64_t client_id, bool force = false);
	// Root: back to READY (engines, chiplets, faults cleared).  Throws
	// Errc::busy naming the processes that have it open, unless @force,
	// which revokes them.  Returns how many were revoked.
	unsigned reset(bool force = false);

	Buffer allocate(uint64_t size, Placement placement = Placement::on_chiplet(0),
			AllocMode mode = AllocMode::lazy);
	Buffer allocate_host(uint64_t size);
	// A dma-buf from another device or process.  The kernel gives one handle
	// per buffer and file: import a given dma-buf once per Device.
	Buffer import(int dmabuf_fd);
	// Queues copies on one engine of one chiplet.
	Job submit(Engine engine, uint32_t chiplet, std::span<const Copy> copies,
		   std::string_view label = {});
	// The same, and the job starts only once every job of @after has ended
	// (they may be of other devices or open files); if one of them failed,
	// this one fails with the same error without running.  At most
	// RBLN_SUBMIT_MAX_AFTER jobs (else Errc::invalid_argument); a driver
	// without syncobjs (interface < 10) takes none (Errc::not_supported).
	Job submit(Engine engine, uint32_t chiplet, std::span<const Copy> copies,
		   std::string_view label, std::span<const Job> after);
	Job submit(Engine engine, uint32_t chiplet, std::initializer_list<Copy> copies,
		   std::string_view label = {})
	{
		return submit(engine, chiplet, std::span<const Copy>(copies.begin(), copies.size()), label);
	}
	Job submit(Engine engine, uint32_t chiplet, std::initializer_list<Copy> copies,
		   std::string_view label, std::span<const Job> after)
	{
		return submit(engine, chiplet, std::span<const Copy>(copies.begin(), copies.size()), label,
			      after);
	}
	Job submit(Engine engine, uint32_t chiplet, std::span<const Copy> copies,
		   std::string_view label, std::initializer_list<Job> after)
	{
		return submit(engine, chiplet, copies, label,
			      std::span<const Job>(after.begin(), after.size()));
	}
	Job submit(Engine engine, uint32_t chiplet, std::initializer_list<Copy> copies,
		   std::string_view label, std::initializer_list<Job> after)
	{
		return submit(engine, chiplet, std::span<const Copy>(copies.begin(), copies.size()), label,
			      std::span<const Job>(after.begin(), after.size()));
	}

	// Submits jobs in order with one system call (drivers before interface 12:
	// one each), as submit() would one by one; a job waits for the earlier
	// ones its after_batch names.  At most RBLN_SUBMIT_MAX_BATCH jobs.  Puts
	// them in @jobs, in order; if job k is refused, the error thrown names it
	// and @jobs holds jobs 0..k-1, which were submitted and run.
	void submit_batch(std::span<const JobSpec> specs, std::vector<Job> &jobs);
	std::vector<Job> submit_batch(std::span<const JobSpec> specs)
	{
		std::vector<Job> jobs;
		submit_batch(specs, jobs);
		return jobs;
	}

private:
	explicit Device(std::shared_ptr<detail::DeviceState> state) : state_(std::move(state)) {}
	std::shared_ptr<detail::DeviceState> state_;
};

// A logical device registered for this process: every physical NPU of it
// acquired, all or nothing.  Released when destroyed (or when the process dies).
// With RBLN_RECLAIM_STALE=1 (ON/TRUE/YES) a stale holder is reclaimed first.
class Registration {
public:
	// @logical_id names the logical device in messages ("rbln:<id>").
	static Registration acquire(unsigned logical_id, const std::vector<unsigned> &npus);
	std::vector<Device> &devices() { return devices_; }

private:
	explicit Registration(std::vector<Device> devices) : devices_(std::move(devices)) {}
	std::vector<Device> devices_;
};

RBLN_CXX_ABI_END // namespace rbln
#pragma GCC visibility pop
