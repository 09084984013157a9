// SPDX-License-Identifier: MIT
#include "health_watcher.hpp"

#include <map>

#include <fmt/format.h>

#include "rbln/events.hpp"

namespace rbln::k8s {

struct EventSource {
	rbln::EventListener listener;

	std::optional<DriverEvent> next()
	{
		try {
			return listener.next(std::chrono::milliseconds(200));
		} catch (const std::exception &e) {
			fmt::print(stderr, "rbln-device-plugin: reading driver events: {}\n", e.what());
			return std::nullopt;
		}
	}
};

HealthWatcher::HealthWatcher(DeviceTable &table)
	: table_(table), events_(std::make_unique<EventSource>()), thread_([this] { run(); })
{
}

HealthWatcher::~HealthWatcher()
{
	stop_ = true;
	thread_.join();
}

void HealthWatcher::run()
{
	using namespace std::chrono_literals;
	using Type = DriverEvent::Type;
	// NPUs announced but whose /dev node udev has not made yet, and until
	// when to look for it.
	std::map<unsigned, std::chrono::steady_clock::time_point> arriving;
	while (!stop_) {
		if (auto ev = events_->next()) {
			switch (ev->type) {
			case Type::fault:
			case Type::memory_error:
				table_.set_health(ev->device, false);
				break;
			case Type::reset:
				table_.set_health(ev->device, true);
				break;
			case Type::device_removed:
				arriving.erase(ev->device);
				table_.remove(ev->device);
				break;
			case Type::device_added:
				arriving[ev->device] = std::chrono::steady_clock::now() + 30s;
				break;
			default:
				break;
			}
		}
		if (!arriving.empty()) {
			table_.replace(scan_npus());
			std::erase_if(arriving, [&](const auto &a) {
				if (table_.contains(a.first))
					return true;
				if (std::chrono::steady_clock::now() < a.second)
					return false;
				fmt::print(stderr, "rbln-device-plugin: NPU {} was added but its node never appeared "
					   "in /dev; not offered\n", a.first);
				return true;
			});
		}
	}
}

} // namespace rbln::k8s
