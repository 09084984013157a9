// SPDX-License-Identifier: MIT
// Keeps a DeviceTable current from the driver's netlink events: a fault or
// memory error makes an NPU Unhealthy, a reset Healthy again, a removal
// drops it, an addition brings it in once its node exists.
#pragma once

#include <atomic>
#include <thread>

#include "device_table.hpp"

namespace rbln::k8s {

class HealthWatcher {
public:
	// Subscribes before returning, so no event after construction is missed.
	explicit HealthWatcher(DeviceTable &table);
	~HealthWatcher();
	HealthWatcher(const HealthWatcher &) = delete;
	HealthWatcher &operator=(const HealthWatcher &) = delete;

private:
	void run();
	DeviceTable &table_;
	std::atomic<bool> stop_{false};
	std::unique_ptr<struct EventSource> events_;
	std::thread thread_;
};

} // namespace rbln::k8s
