// Shared by the C ABI's sources: the handle types and how a C++ failure
// becomes an rbln_status plus the thread's last-error message.
#pragma once

#include <cstring>
#include <new>
#include <string>

#include "device_state.h"

struct rbln_device {
	rbln::Device device;
};

namespace rbln::capi {

std::string &last_error();

template <typename F>
rbln_status guarded(F &&f)
{
	try {
		last_error().clear();
		f();
		return RBLN_OK;
	} catch (const rbln::Error &e) {
		last_error() = e.what();
		return rbln_status(e.code());
	} catch (const std::bad_alloc &) {
		last_error() = "out of host memory in libdevmgr";
		return RBLN_ERR_HOST_MEMORY;
	} catch (const std::exception &e) {
		last_error() = e.what();
		return RBLN_ERR_SYSTEM;
	}
}

inline rbln_status invalid(const char *what)
{
	last_error() = what;
	return RBLN_ERR_INVALID_ARGUMENT;
}

inline void copy_string(char *dst, size_t size, const std::string &src)
{
	std::strncpy(dst, src.c_str(), size - 1);
	dst[size - 1] = '\0';
}

} // namespace rbln::capi
