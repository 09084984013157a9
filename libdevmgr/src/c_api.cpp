// The C ABI: thin wrappers that turn rbln::Error into an rbln_status and
// keep the message for rbln_last_error().
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <vector>

#include "c_api_guard.h"

struct rbln_buffer {
	explicit rbln_buffer(rbln::Buffer b) : buffer(std::move(b)) {}
	rbln::Buffer buffer;
	std::mutex map_lock;	// two threads' first rbln_buffer_map: one mmap
};
// Waits for one job take turns.  A mutex and a condition variable, not a
// std::timed_mutex: that one's try_lock_until is pthread_mutex_clocklock,
// which GCC 12's ThreadSanitizer does not see, so it reports every unlock as
// one of an unlocked mutex and hides real races behind that.
class WaitTurn {
public:
	bool try_lock_until(std::chrono::steady_clock::time_point deadline)
	{
		std::unique_lock lock(mutex_);
		if (!free_.wait_until(lock, deadline, [this] { return !taken_; }))
			return false;
		taken_ = true;
		return true;
	}
	void unlock()
	{
		{
			std::lock_guard lock(mutex_);
			taken_ = false;
		}
		free_.notify_one();
	}

private:
	std::mutex mutex_;
	std::condition_variable free_;
	bool taken_ = false;
};

struct rbln_job {
	explicit rbln_job(rbln::Job j) : job(std::move(j)) {}
	rbln::Job job;
	// The C ABI's promise: a failed job stays failed.  The first wait that
	// sees the failure keeps it; waits take turns, so none sees the job
	// "done" between the failure and its being kept.
	mutable WaitTurn wait_lock;
	mutable rbln_status failed = RBLN_OK;
	mutable std::string failure;
};

RBLN_CXX_ABI_BEGIN namespace capi {

std::string &last_error()
{
	thread_local std::string message;
	return message;
}

} RBLN_CXX_ABI_END // namespace rbln::capi

using rbln::capi::copy_out;
using rbln::capi::copy_string;
using rbln::capi::guarded;
using rbln::capi::invalid;
using rbln::capi::size_ok;

// rbln_copy as the first header had it, without struct_size: the element of
// callers linked against RBLN_DEVMGR_0's submit functions.
struct rbln_copy_v0 {
	const rbln_buffer *src;
	const rbln_buffer *dst;
	uint64_t src_offset;
	uint64_t dst_offset;
	uint64_t size;
};
static_assert(sizeof(rbln_copy_v0) == 40);

// Which layout a caller's copies have: which symbol version it called.
enum class CopyLayout { v0, sized };

// A job's copies as the C++ API takes them, checked: sized elements by
// copy_in_array, and no NULL buffer.  Throws naming "@fn: @name[i]".
static std::vector<rbln::Copy> cpp_copies(const void *copies, size_t count, CopyLayout layout,
					  const std::string &fn, const std::string &name)
{
	std::vector<rbln::Copy> list;
	list.reserve(count);
	auto add = [&](size_t i, const rbln_buffer *src, const rbln_buffer *dst, uint64_t src_offset,
		       uint64_t dst_offset, uint64_t size) {
		if (!src || !dst)
			rbln::detail::fail(EINVAL, fmt::format("{}: {}[{}] has a NULL buffer", fn, name, i));
		list.push_back({src->buffer, dst->buffer, src_offset, dst_offset, size});
	};
	if (layout == CopyLayout::v0) {
		const auto *c = static_cast<const rbln_copy_v0 *>(copies);
		for (size_t i = 0; i < count; i++)
			add(i, c[i].src, c[i].dst, c[i].src_offset, c[i].dst_offset, c[i].size);
	} else {
		auto known = rbln::capi::copy_in_array<rbln_copy>(copies, count, fn, name);
		for (size_t i = 0; i < count; i++)
			add(i, known[i].src, known[i].dst, known[i].src_offset, known[i].dst_offset,
			    known[i].size);
	}
	return list;
}

static std::vector<rbln::Job> cpp_jobs(const rbln_job *const *jobs, size_t count, const std::string &what)
{
	std::vector<rbln::Job> list;
	list.reserve(count);
	for (size_t i = 0; i < count; i++) {
		if (!jobs[i])
			rbln::detail::fail(EINVAL, fmt::format("{}[{}] is NULL", what, i));
		list.push_back(jobs[i]->job);
	}
	return list;
}

// rbln_submit and rbln_submit_after; @fn names the one called in messages.
static rbln_status submit(const char *fn, rbln_device *device, rbln_engine engine, uint32_t chiplet,
			  const void *copies, CopyLayout layout, size_t count, const char *label,
			  const rbln_job *const *after, size_t after_count, rbln_job **out)
{
	if (!device || !out || (!copies && count))
		return invalid(fmt::format("{}: device, copies or out is NULL", fn).c_str());
	if (!after && after_count)
		return invalid(fmt::format("{}: after is NULL but after_count is {}", fn, after_count).c_str());
	return guarded([&] {
		auto list = cpp_copies(copies, count, layout, fn, "copies");
		auto deps = cpp_jobs(after, after_count, fmt::format("{}: after", fn));
		*out = new rbln_job{device->device.submit(rbln::Engine(engine), chiplet, std::move(list),
							   label ? label : "", std::move(deps))};
	});
}

// rbln_submit_batch for both layouts of the descs' copies.
static rbln_status submit_batch(rbln_device *device, const rbln_job_desc *descs, CopyLayout layout,
				size_t count, rbln_job **jobs, size_t *submitted);

extern "C" {

const char *rbln_library_version(void)
{
	return RBLN_DEVMGR_VERSION;
}

const char *rbln_status_string(rbln_status status)
{
	switch (status) {
	case RBLN_OK: return "success";
	case RBLN_ERR_INVALID_ARGUMENT: return "invalid argument";
	case RBLN_ERR_NOT_FOUND: return "not found";
	case RBLN_ERR_NO_DEVICE: return "no such NPU (removed?) or chiplet down";
	case RBLN_ERR_PERMISSION: return "permission denied";
	case RBLN_ERR_DEVICE_MEMORY: return "out of device memory";
	case RBLN_ERR_HOST_MEMORY: return "out of host memory";
	case RBLN_ERR_BUSY: return "busy: held by another process, or too many jobs in flight";
	case RBLN_ERR_TIMEOUT: return "timed out";
	case RBLN_ERR_ENGINE_HUNG: return "engine hung and was reset";
	case RBLN_ERR_JOB_FAILED: return "job failed";
	case RBLN_ERR_CANCELED: return "job cancelled";
	case RBLN_ERR_SYSTEM: return "system error";
	case RBLN_ERR_ABI_MISMATCH: return "driver/library ABI mismatch";
	case RBLN_ERR_DRIVER_NOT_LOADED: return "rbln driver not loaded";
	case RBLN_ERR_NOT_SUPPORTED: return "not supported by the driver or kernel";
	}
	return "unknown status";
}

const char *rbln_last_error(void)
{
	return rbln::capi::last_error().c_str();
}

rbln_status rbln_device_open(unsigned index, rbln_device **out)
{
	if (!out)
		return invalid("rbln_device_open: out is NULL");
	return guarded([&] { *out = new rbln_device{rbln::Device::open(index)}; });
}

rbln_status rbln_device_open_path(const char *path, rbln_device **out)
{
	if (!path || !out)
		return invalid("rbln_device_open_path: path or out is NULL");
	return guarded([&] { *out = new rbln_device{rbln::Device::open_path(path)}; });
}

void rbln_device_close(rbln_device *device)
{
	delete device;
}

rbln_status rbln_device_get_info(const rbln_device *device, rbln_device_info *info)
{
	if (!device || !info || !size_ok<rbln_device_info>(info->struct_size))
		return invalid("rbln_device_get_info: NULL argument or struct_size too small");
	const rbln::DeviceInfo &i = device->device.info();
	rbln_device_info full{};
	full.index = i.index;
	full.chiplet_count = i.chiplet_count;
	full.memory_total = i.memory_total;
	full.capabilities = i.capabilities;
	copy_string(full.name, sizeof(full.name), i.name);
	copy_string(full.uuid, sizeof(full.uuid), i.uuid);
	copy_string(full.pci_bus_id, sizeof(full.pci_bus_id), i.pci_bus_id);
	copy_string(full.driver_version, sizeof(full.driver_version), i.driver_version);
	copy_string(full.firmware_version, sizeof(full.firmware_version), i.firmware_version);
	copy_string(full.serial, sizeof(full.serial), i.serial);
	full.numa_node = i.numa_node;
	full.pci_link_speed_mts = device->device.pci_link().speed_mts;
	full.pci_link_width = device->device.pci_link().width;
	copy_out(full, info, info->struct_size);
	return RBLN_OK;
}

rbln_status rbln_device_memory(const rbln_device *device, int chiplet, rbln_memory_usage *usage)
{
	if (!device || !usage || !size_ok<rbln_memory_usage>(usage->struct_size))
		return invalid("rbln_device_memory: NULL argument or struct_size too small");
	return guarded([&] {
		auto m = chiplet < 0 ? device->device.memory() : device->device.memory(uint32_t(chiplet));
		rbln_memory_usage full{};
		full.total = m.total;
		full.used = m.used;
		full.placed = m.placed;
		copy_out(full, usage, usage->struct_size);
	});
}

rbln_status rbln_buffer_alloc(rbln_device *device, uint64_t size, uint32_t chiplet, uint32_t flags,
			      rbln_buffer **out)
{
	if (!device || !out)
		return invalid("rbln_buffer_alloc: device or out is NULL");
	if (flags & ~uint32_t(RBLN_ALLOC_EAGER | RBLN_ALLOC_HOST))
		return invalid("rbln_buffer_alloc: unknown flags (valid: RBLN_ALLOC_EAGER, RBLN_ALLOC_HOST)");
	return guarded([&] {
		auto &dev = device->device;
		*out = new rbln_buffer{
			flags & RBLN_ALLOC_HOST
				? dev.allocate_host(size)
				: dev.allocate(size, chiplet == RBLN_CHIPLET_INTERLEAVED
							     ? rbln::Placement::interleaved()
							     : rbln::Placement::on_chiplet(chiplet),
					       flags & RBLN_ALLOC_EAGER ? rbln::AllocMode::eager
									: rbln::AllocMode::lazy)};
	});
}

rbln_status rbln_buffer_import(rbln_device *device, int dmabuf_fd, rbln_buffer **out)
{
	if (!device || !out)
		return invalid("rbln_buffer_import: device or out is NULL");
	return guarded([&] { *out = new rbln_buffer{device->device.import(dmabuf_fd)}; });
}

void rbln_buffer_free(rbln_buffer *buffer)
{
	delete buffer;
}

uint64_t rbln_buffer_size(const rbln_buffer *buffer)
{
	return buffer ? buffer->buffer.size() : 0;
}

rbln_status rbln_buffer_map(rbln_buffer *buffer, void **ptr)
{
	if (!buffer || !ptr)
		return invalid("rbln_buffer_map: buffer or ptr is NULL");
	return guarded([&] {
		std::lock_guard guard(buffer->map_lock);
		*ptr = buffer->buffer.map().data();
	});
}

rbln_status rbln_buffer_export(const rbln_buffer *buffer, int *dmabuf_fd)
{
	if (!buffer || !dmabuf_fd)
		return invalid("rbln_buffer_export: buffer or dmabuf_fd is NULL");
	return guarded([&] { *dmabuf_fd = buffer->buffer.export_fd(); });
}

// The current symbols (RBLN_DEVMGR_1 by rbln_devmgr.map) take struct_size'd
// copies; RBLN_DEVMGR_0's, kept for callers linked before, are compat_v0_*,
// which take the first header's 40-byte rbln_copy.
__asm__(".symver compat_v0_submit, rbln_submit@RBLN_DEVMGR_0");
__asm__(".symver compat_v0_submit_after, rbln_submit_after@RBLN_DEVMGR_0");
__asm__(".symver compat_v0_submit_batch, rbln_submit_batch@RBLN_DEVMGR_0");

rbln_status rbln_submit(rbln_device *device, rbln_engine engine, uint32_t chiplet,
			const rbln_copy *copies, size_t count, const char *label, rbln_job **out)
{
	return submit("rbln_submit", device, engine, chiplet, copies, CopyLayout::sized, count, label,
		      nullptr, 0, out);
}

RBLN_API rbln_status compat_v0_submit(rbln_device *device, rbln_engine engine, uint32_t chiplet,
			   const rbln_copy_v0 *copies, size_t count, const char *label, rbln_job **out)
{
	return submit("rbln_submit", device, engine, chiplet, copies, CopyLayout::v0, count, label,
		      nullptr, 0, out);
}

rbln_status rbln_submit_after(rbln_device *device, rbln_engine engine, uint32_t chiplet,
			      const rbln_copy *copies, size_t count, const char *label,
			      const rbln_job *const *after, size_t after_count, rbln_job **out)
{
	return submit("rbln_submit_after", device, engine, chiplet, copies, CopyLayout::sized, count,
		      label, after, after_count, out);
}

RBLN_API rbln_status compat_v0_submit_after(rbln_device *device, rbln_engine engine, uint32_t chiplet,
				 const rbln_copy_v0 *copies, size_t count, const char *label,
				 const rbln_job *const *after, size_t after_count, rbln_job **out)
{
	return submit("rbln_submit_after", device, engine, chiplet, copies, CopyLayout::v0, count,
		      label, after, after_count, out);
}

rbln_status rbln_submit_batch(rbln_device *device, const rbln_job_desc *descs, size_t count,
			      rbln_job **jobs, size_t *submitted)
{
	return submit_batch(device, descs, CopyLayout::sized, count, jobs, submitted);
}

RBLN_API rbln_status compat_v0_submit_batch(rbln_device *device, const rbln_job_desc *descs, size_t count,
				 rbln_job **jobs, size_t *submitted)
{
	return submit_batch(device, descs, CopyLayout::v0, count, jobs, submitted);
}

} // extern "C"

static rbln_status submit_batch(rbln_device *device, const rbln_job_desc *descs, CopyLayout layout,
				size_t count, rbln_job **jobs, size_t *submitted)
{
	if (submitted)
		*submitted = 0;
	if (!device || !jobs || (!descs && count))
		return invalid("rbln_submit_batch: device, descs or jobs is NULL");
	std::fill_n(jobs, count, nullptr);
	std::vector<rbln::Job> done;
	// The handles, made first: a job that went in reaches the caller.  Freed by
	// rbln_job_free's delete, which pairs with this plain operator new.
	static_assert(alignof(rbln_job) <= __STDCPP_DEFAULT_NEW_ALIGNMENT__);
	std::vector<void *> storage;
	auto bad = [](const std::string &why) { rbln::detail::fail(EINVAL, "rbln_submit_batch: " + why); };
	rbln_status status = guarded([&] {
		if (count > RBLN_SUBMIT_MAX_BATCH)
			bad(fmt::format("a batch holds at most {} jobs, not {}", RBLN_SUBMIT_MAX_BATCH, count));
		auto known = rbln::capi::copy_in_array<rbln_job_desc>(descs, count, "rbln_submit_batch",
								       "descs");
		for (size_t i = 0; i < count; i++) {
			const rbln_job_desc &d = known[i];
			if ((!d.copies && d.copy_count) || (!d.after && d.after_count) ||
			    (!d.after_batch && d.after_batch_count))
				bad(fmt::format("descs[{}] has a NULL array with a non-zero count", i));
		}
		std::vector<std::vector<rbln::Copy>> copies(count);
		std::vector<std::vector<rbln::Job>> after(count);
		std::vector<rbln::JobSpec> specs;
		specs.reserve(count);
		for (size_t i = 0; i < count; i++) {
			const rbln_job_desc &d = known[i];
			copies[i] = cpp_copies(d.copies, d.copy_count, layout, "rbln_submit_batch",
					       fmt::format("descs[{}].copies", i));
			after[i] = cpp_jobs(d.after, d.after_count,
					    fmt::format("rbln_submit_batch: descs[{}].after", i));
			specs.push_back({rbln::Engine(d.engine), d.chiplet, copies[i],
					 d.label ? d.label : "", after[i],
					 {d.after_batch, d.after_batch_count}});
		}
		storage.reserve(count);
		for (size_t i = 0; i < count; i++)
			storage.push_back(::operator new(sizeof(rbln_job)));
		device->device.submit_batch(specs, done);
	});
	// The jobs that went in are the caller's, whatever happened after them.
	for (size_t i = 0; i < done.size(); i++)
		jobs[i] = new (storage[i]) rbln_job{std::move(done[i])};
	for (size_t i = done.size(); i < storage.size(); i++)
		::operator delete(storage[i]);
	if (submitted)
		*submitted = done.size();
	return status;
}

extern "C" {

rbln_status rbln_job_wait(const rbln_job *job, int64_t timeout_ns)
{
	if (!job)
		return invalid("rbln_job_wait: job is NULL");
	const auto deadline = std::chrono::steady_clock::now() + std::chrono::nanoseconds(std::max<int64_t>(0, timeout_ns));
	std::unique_lock turn(job->wait_lock, std::defer_lock);
	if (!turn.try_lock_until(deadline))
		return guarded([&] {
			rbln::detail::fail(ETIME, fmt::format("rbln_job_wait: job {} still running after {} ms "
							       "(another thread waits for it too)",
							       job->job.seqno(), timeout_ns / 1000000));
		});
	if (job->failed != RBLN_OK) {
		rbln::capi::last_error() = job->failure;
		return job->failed;
	}
	auto left = std::max(deadline - std::chrono::steady_clock::now(), std::chrono::steady_clock::duration(0));
	rbln_status status = guarded([&] {
		job->job.wait(std::chrono::duration_cast<std::chrono::nanoseconds>(left));
	});
	if (status != RBLN_OK && status != RBLN_ERR_TIMEOUT) {
		job->failed = status;
		job->failure = rbln::capi::last_error();
	}
	return status;
}

rbln_status rbln_job_fd(const rbln_job *job, int *fd)
{
	if (!job || !fd)
		return invalid("rbln_job_fd: job or fd is NULL");
	return guarded([&] { *fd = job->job.fd(); });
}

uint64_t rbln_job_seqno(const rbln_job *job)
{
	return job ? job->job.seqno() : 0;
}

void rbln_job_free(rbln_job *job)
{
	delete job;
}

} // extern "C"
