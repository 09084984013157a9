// The C ABI of lookup, status and engine figures: C callers need no sysfs
// layout of their own.  Same conventions as c_api.cpp.
#include "c_api_guard.h"
#include "rbln/figures.hpp"

using rbln::capi::copy_out;
using rbln::capi::copy_string;
using rbln::capi::guarded;
using rbln::capi::invalid;
using rbln::capi::size_ok;

namespace {

void put_status(const rbln::DeviceStatus &s, rbln_device_status *out)
{
	rbln_device_status full{};
	copy_string(full.status, sizeof(full.status), s.status);
	full.temperature_mc = s.temperature_mc;
	full.pstate = s.pstate;
	full.power_w = s.power_w;
	full.utilization = s.utilization;
	full.memory_total = s.memory_total;
	full.memory_used = s.memory_used;
	full.memory_placed = s.memory_placed;
	full.busy_ns = s.busy_ns;
	copy_out(full, out, out->struct_size);
}

} // namespace

extern "C" {

rbln_status rbln_npu_find(const char *spec, rbln_npu_info *info)
{
	if (!spec || !info || !size_ok<rbln_npu_info>(info->struct_size))
		return invalid("rbln_npu_find: NULL argument or struct_size too small");
	return guarded([&] { rbln::capi::put_npu(rbln::find_npu(spec), info); });
}

rbln_status rbln_device_get_status(const rbln_device *device, rbln_device_status *status)
{
	if (!device || !status || !size_ok<rbln_device_status>(status->struct_size))
		return invalid("rbln_device_get_status: NULL argument or struct_size too small");
	return guarded([&] { put_status(device->device.status(), status); });
}

rbln_status rbln_npu_get_status(const char *spec, rbln_device_status *status)
{
	if (!spec || !status || !size_ok<rbln_device_status>(status->struct_size))
		return invalid("rbln_npu_get_status: NULL argument or struct_size too small");
	return guarded([&] { put_status(rbln::npu_figures(rbln::find_npu(spec)).status, status); });
}

rbln_status rbln_npu_engines(const char *spec, rbln_engine_figures *engines, size_t capacity,
			     size_t *count)
{
	if (!spec || !count || (capacity && !engines))
		return invalid("rbln_npu_engines: NULL argument");
	size_t stride = capacity ? engines->struct_size : 0;
	if (capacity && !size_ok<rbln_engine_figures>(stride))
		return invalid("rbln_npu_engines: engines[0].struct_size too small");
	return guarded([&] {
		size_t n = 0;
		for (const auto &c : rbln::chiplet_figures(rbln::find_npu(spec)))
			for (const auto &e : c.engines) {
				if (n < capacity) {
					rbln_engine_figures full{};
					full.chiplet = c.index;
					full.engine = rbln_engine(e.engine);
					full.busy_ns = e.busy_ns;
					full.chiplet_engine_resets = c.engine_resets;
					rbln::capi::copy_out_element(full, engines, n, stride);
				}
				n++;
			}
		*count = n;
	});
}

} // extern "C"
