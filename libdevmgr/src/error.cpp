// Driver errnos to rbln::Errc, and the small text helpers messages use.
#include <cerrno>
#include <cmath>
#include <cstring>

#include "device_state.h"

namespace rbln {

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
	default:
		return Errc::system;
	}
}

namespace detail {

void fail(int err, const std::string &message)
{
	throw Error(errc_from_errno(err), err, message);
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
} // namespace rbln
