// Driver errnos to rbln::Errc, and the small text helpers messages use.
#include <cerrno>
#include <cmath>
#include <cstring>

#include <unistd.h>

#include "device_state.h"
#include "rbln/enumerate.hpp"

RBLN_CXX_ABI_BEGIN

Errc errc_from_errno(int err) noexcept
{
	switch (err) {
	case 0:
		return Errc::ok;
	case EINVAL:
	case E2BIG:
	case EFAULT:
	case EBADF:
		return Errc::invalid_argument;
	case ENOENT:
		return Errc::not_found;
	case ENODEV:
	case ENXIO:
		return Errc::no_device;
	case EACCES:
	case EPERM:
		return Errc::permission;
	case ENOSPC:
		return Errc::device_memory;
	case ENOMEM:
		return Errc::host_memory;
	case EAGAIN:
	case EBUSY:
		return Errc::busy;
	case ETIME:
		return Errc::timeout;
	case ETIMEDOUT:
		return Errc::engine_hung;
	case EIO:
		return Errc::job_failed;
	case ECANCELED:
		return Errc::canceled;
	case EOPNOTSUPP:
	case ENOTTY:
	case ENOSYS:
		return Errc::not_supported;
	default:
		return Errc::system;
	}
}

bool driver_loaded()
{
	return ::access("/sys/module/rbln", F_OK) == 0;
}

namespace detail {

void fail(int err, const std::string &message)
{
	throw Error(errc_from_errno(err), err, message);
}

void fail_unless_driver_loaded(const std::string &what)
{
	if (!rbln::driver_loaded())
		throw Error(Errc::driver_not_loaded, ENOENT,
			    what + ": the rbln driver is not loaded (no /sys/module/rbln); load it "
				   "(modprobe rbln) or check that DKMS built it for this kernel "
				   "(dkms status rbln)");
}

std::string errno_text(int err)
{
	return std::strerror(err);
}

const char *engine_name(Engine engine)
{
	switch (engine) {
	case Engine::neural_dma:
		return "neural_dma";
	case Engine::task_dma:
		return "task_dma";
	case Engine::device_hdma:
		return "device_hdma";
	case Engine::external_hdma:
		return "external_hdma";
	}
	return "unknown engine";
}

std::string bytes_text(uint64_t bytes)
{
	static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
	double value = double(bytes);
	unsigned unit = 0;
	while (value >= 1024 && unit + 1 < std::size(units)) {
		value /= 1024;
		unit++;
	}
	if (unit == 0 || value == double(uint64_t(value)))
		return fmt::format("{} {}", uint64_t(value), units[unit]);
	/* Rounded down: a size in a message must never look bigger than it is. */
	return fmt::format("{:.1f} {}", std::floor(value * 10) / 10, units[unit]);
}

} // namespace detail
RBLN_CXX_ABI_END // namespace rbln
