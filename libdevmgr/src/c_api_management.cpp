// The C ABI of device management: enumeration, the logical-device plan,
// registration, clients, reclaim and events.  Same conventions as c_api.cpp.
#include <algorithm>
#include <cstring>

#include "c_api_guard.h"
#include "rbln/enumerate.hpp"
#include "rbln/events.hpp"

struct rbln_registration {
	rbln::Registration registration;
};
struct rbln_event_listener {
	rbln::EventListener listener;
};
struct rbln_npu_list {
	std::vector<rbln::NpuInfo> npus;	// as enumerated once
};

RBLN_CXX_ABI_BEGIN namespace capi {

void put_npu(const NpuInfo &n, rbln_npu_info *info)
{
	rbln_npu_info full{};
	full.index = n.index;
	full.chiplet_count = n.chiplet_count;
	full.memory_total = n.memory_total;
	full.node_present = n.node_present;
	copy_string(full.node, sizeof(full.node), n.node);
	copy_string(full.name, sizeof(full.name), n.name);
	copy_string(full.uuid, sizeof(full.uuid), n.uuid);
	copy_string(full.pci_bus_id, sizeof(full.pci_bus_id), n.pci_bus_id);
	copy_string(full.status, sizeof(full.status), n.status);
	copy_out(full, info, info->struct_size);
}

} RBLN_CXX_ABI_END // namespace rbln::capi

using rbln::capi::copy_out;
using rbln::capi::copy_string;
using rbln::capi::guarded;
using rbln::capi::invalid;
using rbln::capi::size_ok;

extern "C" {

rbln_status rbln_npu_count(size_t *count)
{
	if (!count)
		return invalid("rbln_npu_count: count is NULL");
	return guarded([&] { *count = rbln::enumerate_npus().size(); });
}

rbln_status rbln_npu_get(size_t i, rbln_npu_info *info)
{
	if (!info || !size_ok<rbln_npu_info>(info->struct_size))
		return invalid("rbln_npu_get: info is NULL or struct_size too small");
	return guarded([&] {
		auto npus = rbln::enumerate_npus();
		if (i >= npus.size())
			rbln::detail::fail(ENODEV, fmt::format("rbln_npu_get: NPU position {} does not exist "
							       "(this host has {})", i, npus.size()));
		rbln::capi::put_npu(npus[i], info);
	});
}

rbln_status rbln_npu_list_take(rbln_npu_list **out)
{
	if (!out)
		return invalid("rbln_npu_list_take: out is NULL");
	*out = nullptr;
	return guarded([&] { *out = new rbln_npu_list{rbln::enumerate_npus()}; });
}

size_t rbln_npu_list_count(const rbln_npu_list *list)
{
	return list ? list->npus.size() : 0;
}

rbln_status rbln_npu_list_get(const rbln_npu_list *list, size_t i, rbln_npu_info *info)
{
	if (!list || !info || !size_ok<rbln_npu_info>(info->struct_size))
		return invalid("rbln_npu_list_get: list or info is NULL, or info's struct_size too small");
	return guarded([&] {
		if (i >= list->npus.size())
			rbln::detail::fail(ENODEV, fmt::format("rbln_npu_list_get: entry {} does not exist "
							       "(the list holds {})", i, list->npus.size()));
		rbln::capi::put_npu(list->npus[i], info);
	});
}

void rbln_npu_list_free(rbln_npu_list *list)
{
	delete list;
}

size_t rbln_logical_device_count(void)
{
	try {
		auto plan = rbln::logical_devices();
		for (const auto &w : plan.warnings)
			rbln::detail::warn(w);
		return plan.devices.size();
	} catch (...) {
		return 0;
	}
}

size_t rbln_device_summary(char *buffer, size_t size)
{
	std::string text;
	try {
		text = rbln::device_summary();
	} catch (const std::exception &e) {
		text = std::string("error: ") + e.what() + "\n";
	}
	if (buffer && size)
		copy_string(buffer, size, text);
	return text.size();
}

rbln_status rbln_register(unsigned logical_id, rbln_registration **out)
{
	if (!out)
		return invalid("rbln_register: out is NULL");
	return guarded([&] { *out = new rbln_registration{rbln::register_logical_device(logical_id)}; });
}

void rbln_registration_free(rbln_registration *registration)
{
	delete registration;
}

rbln_status rbln_device_acquire(rbln_device *device)
{
	if (!device)
		return invalid("rbln_device_acquire: device is NULL");
	return guarded([&] { device->device.acquire(); });
}

rbln_status rbln_device_release(rbln_device *device)
{
	if (!device)
		return invalid("rbln_device_release: device is NULL");
	return guarded([&] { device->device.release(); });
}

rbln_status rbln_device_clients(const rbln_device *device, rbln_client_info *clients,
				size_t capacity, size_t *count)
{
	if (!device || !count || (capacity && !clients))
		return invalid("rbln_device_clients: NULL argument");
	// The caller's element size, which may differ from ours.
	size_t stride = capacity ? clients->struct_size : 0;
	if (capacity && !size_ok<rbln_client_info>(stride))
		return invalid("rbln_device_clients: clients[0].struct_size too small");
	return guarded([&] {
		auto list = device->device.clients();
		*count = list.size();
		for (size_t i = 0; i < list.size() && i < capacity; i++) {
			const auto &c = list[i];
			rbln_client_info o{};
			o.client_id = c.client_id;
			o.creator_pid = c.creator_pid;
			o.uid = c.uid;
			o.acquired = c.acquired;
			o.stale = c.stale;
			o.self = c.self;
			o.revoked = c.revoked;
			o.device_memory = c.device_memory;
			o.idle_ns = uint64_t(c.idle.count());
			copy_string(o.creator_comm, sizeof(o.creator_comm), c.creator_comm);
			rbln::capi::copy_out_element(o, clients, i, stride);
		}
	});
}

rbln_status rbln_device_reclaim(rbln_device *device, uint64_t client_id, int force,
				uint64_t *freed_bytes)
{
	if (!device)
		return invalid("rbln_device_reclaim: device is NULL");
	return guarded([&] {
		uint64_t freed = device->device.reclaim(client_id, force != 0);
		if (freed_bytes)
			*freed_bytes = freed;
	});
}

rbln_status rbln_device_reset(rbln_device *device, int force, unsigned *revoked)
{
	if (!device)
		return invalid("rbln_device_reset: device is NULL");
	return guarded([&] {
		unsigned n = device->device.reset(force != 0);
		if (revoked)
			*revoked = n;
	});
}

rbln_status rbln_device_usage(const rbln_device *device, rbln_client_usage *usage)
{
	if (!device || !usage || !size_ok<rbln_client_usage>(usage->struct_size))
		return invalid("rbln_device_usage: NULL argument or struct_size too small");
	return guarded([&] {
		rbln::ClientUsage u = device->device.usage();
		rbln_client_usage full{};
		full.client_id = u.client_id;
		full.memory_total = u.memory_total;
		full.memory_resident = u.memory_resident;
		full.device_memory = u.device_memory;
		std::copy(std::begin(u.engine_busy_ns), std::end(u.engine_busy_ns), full.engine_busy_ns);
		copy_out(full, usage, usage->struct_size);
	});
}

rbln_status rbln_event_listener_open(rbln_event_listener **out)
{
	if (!out)
		return invalid("rbln_event_listener_open: out is NULL");
	return guarded([&] { *out = new rbln_event_listener{}; });
}

void rbln_event_listener_close(rbln_event_listener *listener)
{
	delete listener;
}

int rbln_event_listener_fd(const rbln_event_listener *listener)
{
	return listener ? listener->listener.fd() : -1;
}

rbln_status rbln_event_next(rbln_event_listener *listener, int timeout_ms, rbln_event *event)
{
	if (!listener || !event || !size_ok<rbln_event>(event->struct_size))
		return invalid("rbln_event_next: NULL argument or struct_size too small");
	return guarded([&] {
		auto ev = listener->listener.next(std::chrono::milliseconds(timeout_ms));
		if (!ev)
			rbln::detail::fail(ETIME, fmt::format("no rbln event within {} ms", timeout_ms));
		rbln_event full{};
		full.type = rbln_event_type(ev->type);
		full.device = ev->device;
		full.chiplet = ev->chiplet ? int32_t(*ev->chiplet) : -1;
		full.engine = ev->engine ? int32_t(*ev->engine) : -1;
		full.pid = ev->pid ? int32_t(*ev->pid) : -1;
		full.client = ev->client.value_or(0);
		full.bytes = ev->bytes.value_or(0);
		copy_out(full, event, event->struct_size);
	});
}

} // extern "C"
