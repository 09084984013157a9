// SPDX-License-Identifier: MIT
#include "device_table.hpp"

#include <algorithm>

namespace rbln::k8s {

void DeviceTable::bump()
{
	version_++;
	changed_.notify_all();
}

void DeviceTable::replace(std::vector<Npu> npus)
{
	std::lock_guard lock(mutex_);
	auto key = [](const Npu &n) { return std::tie(n.index, n.uuid, n.healthy, n.numa_node); };
	if (std::ranges::equal(npus, npus_, {}, key, key))
		return;
	npus_ = std::move(npus);
	bump();
}

void DeviceTable::set_health(unsigned index, bool healthy)
{
	std::lock_guard lock(mutex_);
	for (auto &n : npus_)
		if (n.index == index && n.healthy != healthy) {
			n.healthy = healthy;
			bump();
		}
}

void DeviceTable::remove(unsigned index)
{
	std::lock_guard lock(mutex_);
	if (std::erase_if(npus_, [&](const Npu &n) { return n.index == index; }))
		bump();
}

bool DeviceTable::contains(unsigned index) const
{
	std::lock_guard lock(mutex_);
	return std::ranges::any_of(npus_, [&](const Npu &n) { return n.index == index; });
}

std::vector<Npu> DeviceTable::snapshot(uint64_t *version) const
{
	std::lock_guard lock(mutex_);
	if (version)
		*version = version_;
	return npus_;
}

bool DeviceTable::wait_change(uint64_t seen, std::chrono::milliseconds timeout) const
{
	std::unique_lock lock(mutex_);
	return changed_.wait_for(lock, timeout, [&] { return version_ != seen; });
}

} // namespace rbln::k8s
