#include "storm_limits.h"

#include <algorithm>

#include <sys/ioctl.h>

namespace storm {

namespace {

bool param(int fd, uint32_t which, uint64_t &value, int chiplet = -1)
{
	drm_rbln_get_param p{};
	p.param = which;
	if (chiplet >= 0) {
		p.flags = DRM_RBLN_GET_PARAM_CHIPLET;
		p.chiplet = static_cast<uint32_t>(chiplet);
	}
	if (::ioctl(fd, DRM_IOCTL_RBLN_GET_PARAM, &p))
		return false;
	value = p.value;
	return true;
}

}  // namespace

bool read_limits(int fd, DeviceLimits &out)
{
	drm_rbln_device_info info{};
	uint64_t max_bytes = 0;
	if (::ioctl(fd, DRM_IOCTL_RBLN_DEVICE_INFO, &info) ||
	    !param(fd, DRM_RBLN_PARAM_JOB_MAX_BYTES, max_bytes) || !info.chiplet_count)
		return false;
	DeviceLimits l;
	l.chiplets = std::min<uint32_t>(info.chiplet_count, static_cast<uint32_t>(l.engines.size()));
	l.job_max_bytes = max_bytes;
	l.simulated = (info.capabilities & DRM_RBLN_CAP_SIMULATED) != 0;
	for (uint32_t c = 0; c < l.chiplets; c++) {
		uint64_t mask = 0;
		if (!param(fd, DRM_RBLN_PARAM_ENGINE_MASK, mask, static_cast<int>(c)))
			return false;
		l.engines[c] = static_cast<uint32_t>(mask);
	}
	out = l;
	return true;
}

}  // namespace storm
