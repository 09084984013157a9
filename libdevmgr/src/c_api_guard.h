// Shared by the C ABI's sources: the handle types and how a C++ failure
// becomes an rbln_status plus the thread's last-error message.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <new>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "device_state.h"
#include "rbln/enumerate.hpp"

struct rbln_device {
	rbln::Device device;
};

RBLN_CXX_ABI_BEGIN namespace capi {

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

// The size each versioned struct had when first published: the smallest
// struct_size a caller may give.
template <typename T> constexpr size_t first_size = 0;
#define RBLN_FIRST_SIZE(type, last_field) \
	template <> constexpr size_t first_size<type> = offsetof(type, last_field) + sizeof(type::last_field)
RBLN_FIRST_SIZE(rbln_device_info, driver_version);
RBLN_FIRST_SIZE(rbln_memory_usage, placed);
RBLN_FIRST_SIZE(rbln_npu_info, status);
RBLN_FIRST_SIZE(rbln_client_info, creator_comm);
RBLN_FIRST_SIZE(rbln_event, bytes);
RBLN_FIRST_SIZE(rbln_device_status, busy_ns);
RBLN_FIRST_SIZE(rbln_engine_figures, reserved);
RBLN_FIRST_SIZE(rbln_job_desc, after_batch_count);
RBLN_FIRST_SIZE(rbln_client_usage, engine_busy_ns);
RBLN_FIRST_SIZE(rbln_copy, size);
#undef RBLN_FIRST_SIZE

// For messages: the struct's C name.
template <typename T> constexpr const char *type_name = "";
template <> constexpr const char *type_name<rbln_copy> = "rbln_copy";
template <> constexpr const char *type_name<rbln_job_desc> = "rbln_job_desc";

#ifdef RBLN_DEVMGR_ABI_TEST_GROWTH
constexpr uint64_t grown_marker = 0x600df1e1d;
#endif

// Whether a caller's struct of @their_size can take a T.
template <typename T>
bool size_ok(size_t their_size)
{
	static_assert(offsetof(T, struct_size) == 0 && first_size<T> > 0);
	return their_size >= first_size<T>;
}

// Writes @full into a caller's struct of @their_size: the common prefix (the
// caller's struct_size left as it is), and zeroes a newer caller's tail.
template <typename T>
void copy_out(T full, void *dst, size_t their_size)
{
#ifdef RBLN_DEVMGR_ABI_TEST_GROWTH	// the ABI test's build fills its added field
	if constexpr (requires { full.grown; })
		full.grown = grown_marker;
#endif
	constexpr size_t head = sizeof(full.struct_size);
	auto *out = static_cast<std::byte *>(dst);
	size_t common = std::min(their_size, sizeof(T));
	std::memcpy(out + head, reinterpret_cast<const std::byte *>(&full) + head, common - head);
	if (their_size > sizeof(T))
		std::memset(out + sizeof(T), 0, their_size - sizeof(T));
}

// Element @i of a caller's array of @stride-byte elements: its struct_size
// set to @stride (the caller set only the first's), then as copy_out.
template <typename T>
void copy_out_element(const T &full, void *array, size_t i, size_t stride)
{
	auto *element = static_cast<std::byte *>(array) + i * stride;
	std::memcpy(element, &stride, sizeof(stride));
	copy_out(full, element, stride);
}

// A caller's array of @count versioned T, each as this library knows it: the
// element size is elements[0].struct_size, every element must say the same,
// an older caller's missing fields read as zero, and a newer caller's fields
// this library does not know must be zero (else it would silently ignore
// them).  Throws Errc::invalid_argument, "@fn: @name[i] ...".
template <typename T>
std::vector<T> copy_in_array(const void *elements, size_t count, const std::string &fn,
			     const std::string &name)
{
	static_assert(offsetof(T, struct_size) == 0 && first_size<T> > 0);
	auto bad = [&](const std::string &why) { detail::fail(EINVAL, fn + ": " + why); };
	std::vector<T> known(count);
	if (!count)
		return known;
	size_t stride;
	std::memcpy(&stride, elements, sizeof(stride));
	if (stride < first_size<T> || stride > 4096)
		bad(fmt::format("{}[0].struct_size is {}, not the element size sizeof({}) ({})", name,
				stride, type_name<T>, sizeof(T)));
	const size_t common = std::min(stride, sizeof(T));
	for (size_t i = 0; i < count; i++) {
		const auto *raw = static_cast<const unsigned char *>(elements) + i * stride;
		std::memcpy(&known[i], raw, common);
		if (known[i].struct_size != stride)
			bad(fmt::format("{}[{}].struct_size is {}, {}[0]'s is {}", name, i,
					known[i].struct_size, name, stride));
		if (std::any_of(raw + common, raw + stride, [](unsigned char b) { return b != 0; }))
			bad(fmt::format("{}[{}] sets fields this libdevmgr {} does not know", name, i,
					RBLN_DEVMGR_VERSION));
	}
	return known;
}

// Fills a caller's rbln_npu_info (c_api_management.cpp).
void put_npu(const NpuInfo &npu, rbln_npu_info *info);

inline void copy_string(char *dst, size_t size, const std::string &src)
{
	std::strncpy(dst, src.c_str(), size - 1);
	dst[size - 1] = '\0';
}

} RBLN_CXX_ABI_END // namespace rbln::capi
