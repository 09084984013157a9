// Exclusive acquisition of devices and registration of logical devices, with
// errors that say who holds an NPU and whether that holder is stale.
#include <cctype>
#include <cerrno>
#include <cstring>
#include <filesystem>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "device_state.h"
#include "rbln_drm.h"

RBLN_CXX_ABI_BEGIN

using detail::fail;

std::vector<ClientInfo> Device::clients() const
{
	std::vector<drm_rbln_client> entries(8);
	drm_rbln_list_clients args{};
	for (;;) {
		args = {};
		args.count = uint32_t(entries.size());
		args.entries = reinterpret_cast<uintptr_t>(entries.data());
		args.entry_size = sizeof(drm_rbln_client);
		if (int err = state_->ioctl(DRM_IOCTL_RBLN_LIST_CLIENTS, &args))
			fail(err, fmt::format("{}: cannot list clients: {}", name(), detail::errno_text(err)));
		if (args.count <= entries.size())
			break;
		entries.resize(args.count);	// more opened meanwhile: ask again with room
	}
	std::vector<ClientInfo> out;
	for (uint32_t i = 0; i < args.count; i++) {
		const auto &e = entries[i];
		out.push_back({e.client_id, e.creator_pid, e.uid,
			       std::string(e.creator_comm, strnlen(e.creator_comm, sizeof(e.creator_comm))),
			       bool(e.flags & DRM_RBLN_CLIENT_ACQUIRED), bool(e.flags & DRM_RBLN_CLIENT_STALE),
			       bool(e.flags & DRM_RBLN_CLIENT_SELF), bool(e.flags & DRM_RBLN_CLIENT_REVOKED),
			       e.device_memory,
			       std::chrono::nanoseconds(e.idle_ns)});
	}
	return out;
}


// Who holds a stale client's file now, for the message.
static std::string current_holders_text(const Device &dev, uint64_t client_id)
{
	if (!(dev.info().capabilities & DRM_RBLN_CAP_FDINFO))
		return "this kernel cannot tell which process holds the file now";
	std::vector<std::string> who;
	for (unsigned pid : client_holder_pids(client_id)) {
		std::string comm = detail::comm_of(pid);
		who.push_back(fmt::format("PID {} ({})", pid, comm.empty() ? "?" : comm));
	}
	return who.empty() ? "no process visible to this user holds the file"
			   : fmt::format("the file is held now by {}", fmt::join(who, ", "));
}

// "NPU 1 is held by PID 1234 (python3)", with staleness, for busy errors.
static std::string holder_text(const Device &dev)
{
	for (const auto &c : dev.clients())
		if (c.acquired && !c.self) {
			std::string who = c.creator_pid ? fmt::format("PID {} ({})", c.creator_pid, c.creator_comm)
							: fmt::format("a process of another PID namespace ({})",
								      c.creator_comm);
			if (c.stale)
				return fmt::format("NPU {} is held by {}, which has exited: the holder is stale "
						   "({}; rbln-smi --reclaim frees it)", dev.info().index, who,
						   current_holders_text(dev, c.client_id));
			return fmt::format("NPU {} is held by {}", dev.info().index, who);
		}
	return fmt::format("NPU {} is held by another user's process (run rbln-smi as root to see "
			   "which)", dev.info().index);
}

void Device::acquire()
{
	drm_rbln_acquire args{};
	if (int err = state_->ioctl(DRM_IOCTL_RBLN_ACQUIRE, &args))
		fail(err, err == EBUSY ? fmt::format("{}: {}", name(), holder_text(*this))
				       : fmt::format("{}: cannot acquire: {}", name(), detail::errno_text(err)));
}

uint64_t Device::reclaim(uint64_t client_id, bool force)
{
	drm_rbln_reclaim args{};
	args.client_id = client_id;
	args.flags = force ? DRM_RBLN_RECLAIM_FORCE : 0;
	if (int err = state_->ioctl(DRM_IOCTL_RBLN_RECLAIM, &args)) {
		const char *why = err == EBUSY    ? "it is not stale (its process is alive); force "
						    "needs root"
				  : err == ENOENT ? "no such client visible to this user"
				  : err == EPERM  ? "only root may force a reclaim"
				  : err == EINVAL ? "that is this handle's own client"
						  : "";
		fail(err, fmt::format("{}: cannot reclaim client {}: {}", name(), client_id,
				      *why ? why : detail::errno_text(err).c_str()));
	}
	return args.freed_bytes;
}

unsigned Device::reset(bool force)
{
	drm_rbln_reset args{};
	args.flags = force ? DRM_RBLN_RESET_FORCE : 0;
	if (int err = state_->ioctl(DRM_IOCTL_RBLN_RESET, &args)) {
		if (err != EBUSY)
			fail(err, fmt::format("{}: cannot reset: {}", name(),
					      err == EPERM ? "only root may reset a device"
							   : detail::errno_text(err)));
		std::vector<std::string> who;
		for (const auto &c : clients())
			if (!c.self && !c.revoked)
				who.push_back(fmt::format("PID {} ({}{})", c.creator_pid, c.creator_comm,
							  c.stale ? ", exited: stale" : ""));
		fail(err, fmt::format("{}: in use by {}; stop them, or force the reset, which revokes "
				      "their access", name(), fmt::join(who, ", ")));
	}
	return args.revoked;
}

void Device::release()
{
	drm_rbln_acquire args{};
	if (int err = state_->ioctl(DRM_IOCTL_RBLN_RELEASE, &args))
		fail(err, fmt::format("{}: cannot release: {}", name(),
				      err == EINVAL ? "this handle does not hold the device"
						    : detail::errno_text(err)));
}

// RBLN_RECLAIM_STALE: a stale holder is reclaimed, and said so.
static bool reclaim_stale_holder(Device &dev)
{
	if (!detail::env_flag("RBLN_RECLAIM_STALE"))
		return false;
	for (const auto &c : dev.clients())
		if (c.acquired && !c.self && c.stale) {
			uint64_t freed = dev.reclaim(c.client_id);
			detail::warn(fmt::format("{}: reclaimed the stale holder of NPU {} (client {} of "
						 "exited PID {} ({}), {} freed) because RBLN_RECLAIM_STALE "
						 "is set", dev.name(), dev.info().index, c.client_id,
						 c.creator_pid, c.creator_comm, detail::bytes_text(freed)));
			return true;
		}
	return false;
}

Registration Registration::acquire(unsigned logical_id, const std::vector<unsigned> &npus)
{
	std::vector<Device> taken;
	// Looked up once for the group: each NPU then costs its open and ioctls.
	const auto nodes = detail::npu_nodes();
	for (unsigned npu : npus) {
		try {
			Device dev = Device::open_path(detail::npu_node(nodes, npu));
			try {
				dev.acquire();
			} catch (const Error &e) {
				if (e.code() != Errc::busy || !reclaim_stale_holder(dev))
					throw;
				dev.acquire();
			}
			taken.push_back(std::move(dev));
		} catch (const Error &e) {
			// All or nothing: closing the devices taken so far releases them.
			taken.clear();
			throw Error(e.code(), e.sys_errno(),
				    fmt::format("rbln_register_device_id failed for rbln:{} on physical NPU(s) "
						"[{}] (rc=-{}); {}. Free the device(s) or adjust "
						"RBLN_VISIBLE_DEVICES. No NPU stays acquired by this process.",
						logical_id, fmt::join(npus, ","), e.sys_errno(), e.what()));
		}
	}
	return Registration(std::move(taken));
}

RBLN_CXX_ABI_END // namespace rbln
