// The ABI check: the library records the interface it was built against and
// refuses drivers whose accepted range does not include it (seed 000's rule).
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <strings.h>

#include "device_state.h"
#include "rbln_drm.h"

namespace rbln {

uint32_t built_uapi_version() noexcept
{
	return DRM_RBLN_UAPI_VERSION;
}

AbiVerdict check_abi(uint32_t built, std::optional<uint32_t> driver_version,
		     std::optional<uint32_t> driver_compat)
{
	if (!driver_version || !driver_compat)
		return {true, fmt::format("the rbln driver does not state its interface versions; "
					  "continuing without the ABI check (libdevmgr built against "
					  "interface {})", built)};
	return {*driver_compat <= built && built <= *driver_version, {}};
}

namespace detail {

bool env_flag(const char *name)
{
	const char *v = std::getenv(name);
	if (!v)
		return false;
	for (const char *yes : {"1", "on", "true", "yes"})
		if (!strcasecmp(v, yes))
			return true;
	return false;
}

void warn(const std::string &message)
{
	std::fprintf(stderr, "libdevmgr: warning: %s\n", message.c_str());
}

// Called by Device::open once the node answered.
void check_device_abi(const DeviceState &dev)
{
	if (env_flag("RBLN_SKIP_ABI_CHECK")) {
		warn(fmt::format("RBLN_SKIP_ABI_CHECK is set: not checking {} against this library; an "
				 "incompatible driver may fail in unexpected ways", dev.info.node));
		return;
	}
	auto param = [&](uint32_t p) -> std::optional<uint32_t> {
		drm_rbln_get_param args{};
		args.param = p;
		if (dev.ioctl(DRM_IOCTL_RBLN_GET_PARAM, &args))
			return std::nullopt;
		return uint32_t(args.value);
	};
	auto version = param(DRM_RBLN_PARAM_UAPI_VERSION);
	auto compat = param(DRM_RBLN_PARAM_UAPI_COMPAT_VERSION);
	AbiVerdict v = check_abi(DRM_RBLN_UAPI_VERSION, version, compat);
	if (!v.warning.empty())
		warn(v.warning);
	if (!v.ok)
		throw Error(Errc::abi_mismatch, EPROTO,
			    fmt::format("RBLN ABI mismatch: {} is driven by rbln.ko {} which implements "
					"interface {} and accepts consumers built against {}..{}; this "
					"libdevmgr was built against interface {}. Install rbln.ko and "
					"libdevmgr from the same release (RBLN_SKIP_ABI_CHECK=1 skips this "
					"check at your own risk)",
					dev.info.node, dev.info.driver_version, *version, *compat, *version,
					DRM_RBLN_UAPI_VERSION));
}

} // namespace detail
} // namespace rbln
