#include "storm_leftovers.h"

#include <chrono>
#include <cstdint>
#include <cstring>
#include <thread>

#include <fcntl.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <fmt/format.h>

#include "rbln_drm.h"
#include "storm_devices.h"

namespace storm {
namespace {

uint64_t param(int fd, uint32_t which)
{
	drm_rbln_get_param p{};
	p.param = which;
	return ::ioctl(fd, DRM_IOCTL_RBLN_GET_PARAM, &p) ? ~0ULL : p.value;
}

// The device's clients other than @fd's own, or an error text in @err.
std::vector<drm_rbln_client> others(int fd, std::string &err)
{
	std::vector<drm_rbln_client> all(8);
	for (;;) {
		drm_rbln_list_clients l{};
		l.count = static_cast<uint32_t>(all.size());
		l.entries = reinterpret_cast<uintptr_t>(all.data());
		l.entry_size = sizeof(drm_rbln_client);
		if (::ioctl(fd, DRM_IOCTL_RBLN_LIST_CLIENTS, &l)) {
			err = fmt::format("LIST_CLIENTS: {}", std::strerror(errno));
			return {};
		}
		if (l.count <= all.size()) {
			all.resize(l.count);
			break;
		}
		all.resize(l.count);	// more opened meanwhile: again with room
	}
	std::erase_if(all, [](const drm_rbln_client &c) { return c.flags & DRM_RBLN_CLIENT_SELF; });
	return all;
}

std::string describe(const std::string &node, const drm_rbln_client &c)
{
	std::string flags;
	if (c.flags & DRM_RBLN_CLIENT_STALE)
		flags += ", stale (its creator has exited)";
	if (c.flags & DRM_RBLN_CLIENT_REVOKED)
		flags += ", revoked";
	if (c.flags & DRM_RBLN_CLIENT_ACQUIRED)
		flags += ", holds the device";
	return fmt::format("{}: client {} still open, opened by pid {} ({}){}, {} bytes of device memory, "
			   "idle {:.1f} s", node, c.client_id, c.creator_pid,
			   std::string(c.creator_comm, strnlen(c.creator_comm, sizeof(c.creator_comm))), flags,
			   c.device_memory, static_cast<double>(c.idle_ns) / 1e9);
}

std::vector<std::string> look()
{
	std::vector<std::string> found;
	for (const auto &node : device_nodes()) {
		int fd = ::open(node.c_str(), O_RDWR | O_CLOEXEC);
		if (fd < 0)
			continue;	// removed meanwhile
		std::string err;
		for (const auto &c : others(fd, err))
			found.push_back(describe(node, c));
		if (!err.empty())
			found.push_back(fmt::format("{}: {}", node, err));
		uint64_t used = param(fd, DRM_RBLN_PARAM_MEMORY_USED);
		uint64_t placed = param(fd, DRM_RBLN_PARAM_MEMORY_PLACED);
		::close(fd);
		if (used || placed)
			found.push_back(fmt::format("{}: memory not returned: {} bytes used, {} placed", node,
						    used, placed));
	}
	return found;
}

}  // namespace

std::vector<std::string> leftovers()
{
	std::vector<std::string> found;
	for (int tries = 0; tries < 100; tries++) {
		found = look();
		if (found.empty())
			break;
		std::this_thread::sleep_for(std::chrono::milliseconds(200));
	}
	return found;
}

}  // namespace storm
