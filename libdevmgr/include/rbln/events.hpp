// SPDX-License-Identifier: MIT
// Driver events (generic netlink family "rbln", group "events"): devices
// added and removed, acquisitions, reclaims, engine resets, faults.
#pragma once

#include "abi_namespace.hpp"

#include <chrono>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#pragma GCC visibility push(default)
RBLN_CXX_ABI_BEGIN

struct DriverEvent {
	enum class Type : uint32_t {	// enum rbln_genl_event
		device_added = 1,
		device_removed = 2,
		acquired = 3,
		released = 4,
		reclaimed = 5,
		job_timeout = 6,	// the engine was reset
		fault = 7,
		memory_error = 8,
		reset = 9,
		// Not the driver's: the socket's buffer overflowed (ENOBUFS) and
		// events were dropped; device is ~0u. Re-read what you follow.
		events_lost = 0x10000,
	};
	Type type;
	unsigned device;			// NPU index
	std::optional<uint32_t> chiplet, engine, pid;
	std::optional<uint64_t> client, bytes;
};

const char *to_string(DriverEvent::Type type);

class EventListener {
public:
	// Throws Errc::no_device when the rbln driver (its family) is not loaded.
	EventListener();
	~EventListener();
	EventListener(const EventListener &) = delete;
	EventListener &operator=(const EventListener &) = delete;
	int fd() const;	// for poll()
	std::optional<DriverEvent> next(std::chrono::milliseconds timeout);

private:
	struct Impl;
	std::unique_ptr<Impl> impl_;
};

RBLN_CXX_ABI_END // namespace rbln
#pragma GCC visibility pop
