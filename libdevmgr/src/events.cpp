// Driver events through libnl: subscribe to the "rbln" family's multicast
// group and turn each message into a DriverEvent.
#include <cerrno>
#include <deque>

#include <netlink/genl/ctrl.h>
#include <netlink/genl/genl.h>
#include <poll.h>

#include "device_state.h"
#include "rbln/events.hpp"
#include "rbln_drm.h"

RBLN_CXX_ABI_BEGIN

const char *to_string(DriverEvent::Type type)
{
	switch (type) {
	case DriverEvent::Type::device_added: return "device_added";
	case DriverEvent::Type::device_removed: return "device_removed";
	case DriverEvent::Type::acquired: return "acquired";
	case DriverEvent::Type::released: return "released";
	case DriverEvent::Type::reclaimed: return "reclaimed";
	case DriverEvent::Type::job_timeout: return "job_timeout";
	case DriverEvent::Type::fault: return "fault";
	case DriverEvent::Type::memory_error: return "memory_error";
	case DriverEvent::Type::reset: return "reset";
	case DriverEvent::Type::events_lost: return "events_lost";
	}
	return "unknown";
}

struct EventListener::Impl {
	nl_sock *sock = nullptr;
	std::deque<DriverEvent> queue;

	~Impl()
	{
		if (sock)
			nl_socket_free(sock);
	}

	static int on_message(nl_msg *msg, void *arg)
	{
		auto *self = static_cast<Impl *>(arg);
		nlattr *attrs[RBLN_GENL_ATTR_MAX + 1];
		if (genlmsg_parse(nlmsg_hdr(msg), 0, attrs, RBLN_GENL_ATTR_MAX, nullptr) < 0 ||
		    !attrs[RBLN_GENL_ATTR_EVENT] || !attrs[RBLN_GENL_ATTR_DEVICE])
			return NL_SKIP;
		DriverEvent ev{DriverEvent::Type(nla_get_u32(attrs[RBLN_GENL_ATTR_EVENT])),
			       nla_get_u32(attrs[RBLN_GENL_ATTR_DEVICE]), {}, {}, {}, {}, {}};
		auto u32 = [&](int a) -> std::optional<uint32_t> {
			return attrs[a] ? std::optional<uint32_t>(nla_get_u32(attrs[a])) : std::nullopt;
		};
		auto u64 = [&](int a) -> std::optional<uint64_t> {
			return attrs[a] ? std::optional<uint64_t>(nla_get_u64(attrs[a])) : std::nullopt;
		};
		ev.chiplet = u32(RBLN_GENL_ATTR_CHIPLET);
		ev.engine = u32(RBLN_GENL_ATTR_ENGINE);
		ev.pid = u32(RBLN_GENL_ATTR_PID);
		ev.client = u64(RBLN_GENL_ATTR_CLIENT);
		ev.bytes = u64(RBLN_GENL_ATTR_BYTES);
		self->queue.push_back(ev);
		return NL_OK;
	}
};

EventListener::EventListener() : impl_(std::make_unique<Impl>())
{
	impl_->sock = nl_socket_alloc();
	if (!impl_->sock || genl_connect(impl_->sock) < 0)
		detail::fail(EIO, "cannot open a generic netlink socket for rbln events");
	int group = genl_ctrl_resolve_grp(impl_->sock, RBLN_GENL_NAME, RBLN_GENL_MCGRP_EVENTS);
	if (group < 0) {
		detail::fail_unless_driver_loaded("cannot listen for rbln events");
		detail::fail(EOPNOTSUPP, "the loaded rbln driver has no event family (an older driver?); "
				     "update rbln.ko");
	}
	int err = nl_socket_add_membership(impl_->sock, group);
	if (err == -NLE_PERM)
		detail::fail(EPERM, "driver events name every user's processes, so only root "
				    "(CAP_SYS_ADMIN) may receive them; run this as root");
	if (err < 0)
		detail::fail(EIO, "cannot join the rbln events group");
	nl_socket_disable_seq_check(impl_->sock);
	nl_socket_modify_cb(impl_->sock, NL_CB_VALID, NL_CB_CUSTOM, &Impl::on_message, impl_.get());
	nl_socket_set_nonblocking(impl_->sock);
}

EventListener::~EventListener() = default;

int EventListener::fd() const
{
	return nl_socket_get_fd(impl_->sock);
}

std::optional<DriverEvent> EventListener::next(std::chrono::milliseconds timeout)
{
	auto deadline = std::chrono::steady_clock::now() + timeout;
	while (impl_->queue.empty()) {
		auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
			deadline - std::chrono::steady_clock::now());
		pollfd p{fd(), POLLIN, 0};
		if (left.count() < 0 || ::poll(&p, 1, int(left.count())) <= 0)
			return std::nullopt;
		// ENOBUFS (libnl's NLE_NOMEM): the kernel dropped events for this
		// socket; say so rather than let a FAULT go unseen.
		if (int err = nl_recvmsgs_default(impl_->sock); err == -NLE_NOMEM)
			impl_->queue.push_back({DriverEvent::Type::events_lost, ~0u, {}, {}, {}, {}, {}});
	}
	DriverEvent ev = impl_->queue.front();
	impl_->queue.pop_front();
	return ev;
}

RBLN_CXX_ABI_END // namespace rbln
