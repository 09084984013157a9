// Opening a device and asking it about itself.
#include <cerrno>
#include <cstdio>

#include <fcntl.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "device_state.h"
#include "profile/recorder.h"
#include "rbln_drm.h"

RBLN_CXX_ABI_BEGIN

static_assert(int(RBLN_ENGINE_NEURAL_DMA) == int(DRM_RBLN_ENGINE_NEURAL_DMA));
static_assert(int(RBLN_ENGINE_TASK_DMA) == int(DRM_RBLN_ENGINE_TASK_DMA));
static_assert(int(RBLN_ENGINE_DEVICE_HDMA) == int(DRM_RBLN_ENGINE_DEVICE_HDMA));
static_assert(int(RBLN_ENGINE_EXTERNAL_HDMA) == int(DRM_RBLN_ENGINE_EXTERNAL_HDMA));
static_assert(RBLN_CHIPLET_INTERLEAVED == DRM_RBLN_CHIPLET_INTERLEAVED);
static_assert(RBLN_ALLOC_EAGER == DRM_RBLN_BO_EAGER && RBLN_ALLOC_HOST == DRM_RBLN_BO_HOST);

namespace detail {

DeviceState::~DeviceState()
{
	if (fd < 0)
		return;
	profile::detail::device_closing(*this);
	// Closing the file would free them too, but not while a dup() of it lives.
	syncobjs.clear(*this);
	::close(fd);
}

bool DeviceState::has_syncobjs() const
{
	return info.capabilities & DRM_RBLN_CAP_SYNCOBJ;
}

bool DeviceState::reports_end() const
{
	return uapi_version >= 11;
}

uint64_t DeviceState::job_max_bytes() const
{
	if (uint64_t known = job_max_bytes_.load(std::memory_order_relaxed))
		return known;
	drm_rbln_get_param p{};
	p.param = DRM_RBLN_PARAM_JOB_MAX_BYTES;
	uint64_t limit = UINT64_MAX;
	if (uapi_version >= 13 && !ioctl(DRM_IOCTL_RBLN_GET_PARAM, &p) && p.value)
		limit = p.value;
	job_max_bytes_.store(limit, std::memory_order_relaxed);
	return limit;
}

int DeviceState::ioctl(unsigned long request, void *arg) const
{
	int ret;
	do
		ret = ::ioctl(fd, request, arg);
	while (ret && errno == EINTR);
	return ret ? errno : 0;
}

} // namespace detail

using detail::fail;

static std::string open_hint(int err, std::optional<unsigned> index)
{
	switch (err) {
	case ENOENT:
		return fmt::format("no such device node; check that the rbln driver is loaded "
				   "(lsmod | grep rbln) and that {} exists (ls -l /dev/rbln* /dev/accel /dev/dri)",
				   index ? fmt::format("NPU {}", *index) : std::string("the NPU"));
	case EACCES:
	case EPERM:
		return "permission denied; device nodes belong to group 'rbln': add the user "
		       "(usermod -aG rbln $USER) and log in again";
	default:
		return detail::errno_text(err);
	}
}

std::shared_ptr<detail::DeviceState> detail::open_node(const std::string &path,
						      std::optional<unsigned> index)
{
	auto state = std::make_shared<detail::DeviceState>();
	state->fd = ::open(path.c_str(), O_RDWR | O_CLOEXEC);
	if (state->fd < 0) {
		int err = errno;
		if (err == ENOENT)
			detail::fail_unless_driver_loaded(fmt::format("cannot open {}", path));
		// No node: no such NPU here, Errc::no_device as for a removed one.
		throw Error(err == ENOENT ? Errc::no_device : errc_from_errno(err), err,
			    fmt::format("cannot open {}: {}", path, open_hint(err, index)));
	}

	drm_rbln_device_info di{};
	if (int err = state->ioctl(DRM_IOCTL_RBLN_DEVICE_INFO, &di))
		fail(err == ENOTTY || err == EINVAL ? ENODEV : err,
		     fmt::format("{} is not an rbln NPU or its driver does not answer: {}", path,
				 detail::errno_text(err)));
	const uint8_t *u = di.uuid;
	state->info = DeviceInfo{
		.index = di.index,
		.chiplet_count = di.chiplet_count,
		.numa_node = di.numa_node,
		.memory_total = di.memory_total,
		.capabilities = di.capabilities,
		.name = di.name,
		.uuid = fmt::format("{:02x}{:02x}{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}-{:02x}{:02x}-"
				    "{:02x}{:02x}{:02x}{:02x}{:02x}{:02x}",
				    u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9],
				    u[10], u[11], u[12], u[13], u[14], u[15]),
		.pci_bus_id = di.pci_bus_id,
		.serial = di.serial,
		.firmware_version = di.firmware_version,
		.driver_version = di.driver_version,
		.node = path,
	};
	state->uapi_version = di.uapi_version;
	if (state->uapi_version >= 14)
		state->profile_submit_flags |= DRM_RBLN_SUBMIT_TIMES;
	if (state->uapi_version >= 16 && state->reports_end())
		state->profile_submit_flags |= DRM_RBLN_SUBMIT_REPORT_TIMES;
	// A driver before 15 writes only its 208 bytes: the rest stays zero.
	state->pci_link = {di.pci_link_speed_mts, di.pci_link_width};
	detail::check_device_abi(*state);
	return state;
}

Device Device::open(unsigned index)
{
	return Device(detail::open_node(detail::npu_node(detail::npu_nodes(), index), index));
}

Device Device::open_path(const std::string &path)
{
	return Device(detail::open_node(path, std::nullopt));
}

const DeviceInfo &Device::info() const
{
	return state_->info;
}

std::string Device::name() const
{
	return state_->name();
}

int Device::fd() const
{
	return state_->fd;
}

uint64_t Device::param(uint32_t param, std::optional<uint32_t> chiplet) const
{
	drm_rbln_get_param args{};
	args.param = param;
	if (chiplet) {
		args.flags = DRM_RBLN_GET_PARAM_CHIPLET;
		args.chiplet = *chiplet;
	}
	if (int err = state_->ioctl(DRM_IOCTL_RBLN_GET_PARAM, &args))
		fail(err, fmt::format("{}: cannot read parameter {}{}: {}", name(), param,
				      chiplet ? fmt::format(" of chiplet {}", *chiplet) : "",
				      detail::errno_text(err)));
	return args.value;
}

MemoryUsage Device::memory(std::optional<uint32_t> chiplet) const
{
	return {param(DRM_RBLN_PARAM_MEMORY_TOTAL, chiplet), param(DRM_RBLN_PARAM_MEMORY_USED, chiplet),
		param(DRM_RBLN_PARAM_MEMORY_PLACED, chiplet)};
}

PciLink Device::pci_link() const
{
	return state_->pci_link;
}

DeviceStatus Device::status() const
{
	static const char *const names[] = {"READY", "BUSY", "INIT", "FAULT", "FINISH"};
	drm_rbln_device_status st{};
	if (int err = state_->ioctl(DRM_IOCTL_RBLN_DEVICE_STATUS, &st))
		fail(err, fmt::format("{}: cannot read its status: {}", name(), detail::errno_text(err)));
	return {st.status < std::size(names) ? names[st.status] : "UNKNOWN", st.temperature_mc,
		double(st.power_uw) / 1e6, st.pstate, st.utilization, st.memory_total, st.memory_used,
		st.memory_placed, st.busy_ns};
}

ClientUsage Device::usage() const
{
	drm_rbln_client_usage u{};
	if (int err = state_->ioctl(DRM_IOCTL_RBLN_CLIENT_USAGE, &u))
		fail(err, fmt::format("{}: cannot read this client's usage: {}", name(),
				      detail::errno_text(err)));
	ClientUsage out{u.client_id, u.memory_total, u.memory_resident, u.device_memory, {}};
	std::copy(std::begin(u.engine_busy_ns), std::end(u.engine_busy_ns), out.engine_busy_ns);
	return out;
}

RBLN_CXX_ABI_END // namespace rbln
