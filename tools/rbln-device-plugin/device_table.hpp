// SPDX-License-Identifier: MIT
// The NPUs as the plugin currently sees them, shared by the health watcher
// (writer) and the ListAndWatch streams (readers, woken on every change).
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <vector>

#include "inventory.hpp"

namespace rbln::k8s {

class DeviceTable {
public:
	explicit DeviceTable(std::vector<Npu> npus) : npus_(std::move(npus)) {}

	void replace(std::vector<Npu> npus);
	void set_health(unsigned index, bool healthy);
	void remove(unsigned index);
	bool contains(unsigned index) const;

	// The NPUs and the version they are at.
	std::vector<Npu> snapshot(uint64_t *version = nullptr) const;
	// Waits until the version differs from @seen or @timeout passes; true on a change.
	bool wait_change(uint64_t seen, std::chrono::milliseconds timeout) const;
	// Wakes every waiter (shutdown).
	void wake_all() const { changed_.notify_all(); }

private:
	void bump();	// with mutex_ held
	mutable std::mutex mutex_;
	mutable std::condition_variable changed_;
	std::vector<Npu> npus_;
	uint64_t version_ = 1;
};

} // namespace rbln::k8s
