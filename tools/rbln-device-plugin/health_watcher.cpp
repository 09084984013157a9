// SPDX-License-Identifier: MIT
#include "health_watcher.hpp"

#include <set>

#include <fmt/format.h>

#include "rbln/events.hpp"

namespace rbln::k8s {

struct EventSource {
	rbln::EventListener listener;
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
	// NPUs announced but whose /dev node udev has not made yet.
	std::set<unsigned> arriving;
	while (!stop_) {
		std::optional<DriverEvent> ev;
		try {
			ev = events_->listener.next(200ms);
		} catch (const std::exception &e) {
			fmt::print(stderr, "rbln-device-plugin: reading driver events: {}\n", e.what());
		}
		if (ev) {
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
				arriving.insert(ev->device);
				break;
			default:
				break;
			}
		}
		if (!arriving.empty()) {
			table_.replace(scan_npus());
			std::erase_if(arriving, [&](unsigned i) { return table_.contains(i); });
		}
	}
}

} // namespace rbln::k8s
