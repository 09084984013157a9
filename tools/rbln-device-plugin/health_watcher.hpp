// SPDX-License-Identifier: MIT
// Keeps a DeviceTable current: every NPU's health is re-read from sysfs (its
// status and its chiplets' status, which need no privilege) every interval,
// and at once after a driver event where this process may receive them
// (root: CAP_SYS_ADMIN) or after events were lost. Each change is logged with
// its reason and what triggered the re-read.
#pragma once

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include "device_table.hpp"

namespace rbln::k8s {

struct HealthOptions {
	bool checks = true;	// false: every NPU stays Healthy (hotplug still followed)
	std::chrono::milliseconds interval{1000};
};

// RBLN_DISABLE_HEALTHCHECKS, as NVIDIA's DP_DISABLE_HEALTHCHECKS: "all" (or
// 1/true/yes) turns checks off, ""/0/false/no keeps them; anything else
// throws std::invalid_argument naming the value and what is valid.
bool health_checks_disabled_by(const std::string &value);

class HealthWatcher {
public:
	// Reads every NPU once before returning.
	HealthWatcher(DeviceTable &table, HealthOptions options);
	~HealthWatcher();
	HealthWatcher(const HealthWatcher &) = delete;
	HealthWatcher &operator=(const HealthWatcher &) = delete;

private:
	void run();
	void resync(const std::string &why);
	DeviceTable &table_;
	HealthOptions options_;
	std::atomic<bool> stop_{false};
	std::unique_ptr<struct EventSource> events_;
	std::thread thread_;
};

} // namespace rbln::k8s
