// The ABI check: the library records the interface it was built against and
// refuses drivers whose accepted range does not include it (seed 000's rule).
#include <cerrno>
#include <cstdio>
#include <dlfcn.h>
#include <filesystem>
#include <cstdlib>
#include <strings.h>

#include "device_state.h"
#include "rbln_drm.h"

RBLN_CXX_ABI_BEGIN

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

// The file this library was loaded from, as the loader found it: the path a
// mismatch report must name, since several copies may be installed.
std::string library_path()
{
	Dl_info info{};
	if (dladdr(reinterpret_cast<void *>(&built_uapi_version), &info) && info.dli_fname &&
	    *info.dli_fname) {
		std::error_code ec;	// a program's own name may be relative (argv[0])
		auto path = std::filesystem::absolute(info.dli_fname, ec);
		return ec ? std::string(info.dli_fname) : path.string();
	}
	return "librbln_devmgr.so.0";
}

std::string abi_mismatch_message(const std::string &library, uint32_t built, const std::string &node,
				 const std::string &driver_release, uint32_t version, uint32_t compat)
{
	return fmt::format("RBLN ABI mismatch: {} was built against interface {}, but {} is driven by "
			   "rbln.ko {}, which implements interface {} and accepts consumers built against "
			   "{}..{}. Install rbln.ko and libdevmgr from the same release "
			   "(RBLN_SKIP_ABI_CHECK=1 skips this check at your own risk)",
			   library, built, node, driver_release, version, compat, version);
}

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
			    abi_mismatch_message(library_path(), DRM_RBLN_UAPI_VERSION, dev.info.node,
						 dev.info.driver_version, *version, *compat));
}

} // namespace detail
RBLN_CXX_ABI_END // namespace rbln
