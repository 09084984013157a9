// SPDX-License-Identifier: MIT
#include "health_watcher.hpp"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <map>
#include <stdexcept>

#include <fmt/format.h>

#include "rbln/events.hpp"

namespace rbln::k8s {

namespace {

void log(const std::string &line)
{
	fmt::print(stderr, "rbln-device-plugin: {}\n", line);
	std::fflush(stderr);
}

std::string lower(std::string s)
{
	std::ranges::transform(s, s.begin(), [](unsigned char c) { return char(std::tolower(c)); });
	return s;
}

} // namespace

bool health_checks_disabled_by(const std::string &value)
{
	const std::string v = lower(value);
	if (v == "all" || v == "1" || v == "true" || v == "yes")
		return true;
	if (v.empty() || v == "0" || v == "false" || v == "no")
		return false;
	throw std::invalid_argument(fmt::format(
		"RBLN_DISABLE_HEALTHCHECKS='{}' is not understood (valid: all, 1, true or yes to turn health "
		"checks off; empty, 0, false or no to keep them)", value));
}

// The driver's events, where this process may receive them: they only make
// a re-read come sooner; without them the periodic re-read is the health.
struct EventSource {
	std::unique_ptr<rbln::EventListener> listener;

	EventSource()
	{
		try {
			listener = std::make_unique<rbln::EventListener>();
		} catch (const std::exception &e) {
			log(fmt::format("driver events not received ({}); health comes from sysfs alone", e.what()));
		}
	}

	// An event that calls for a re-read, named; nullopt after @timeout.
	std::optional<std::string> next(std::chrono::milliseconds timeout)
	{
		using Type = DriverEvent::Type;
		const auto deadline = std::chrono::steady_clock::now() + timeout;
		for (;;) {
			auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
				deadline - std::chrono::steady_clock::now());
			if (left.count() <= 0)
				return std::nullopt;
			if (!listener) {
				std::this_thread::sleep_for(std::min(left, std::chrono::milliseconds(200)));
				continue;
			}
			std::optional<DriverEvent> ev;
			try {
				ev = listener->next(std::min(left, std::chrono::milliseconds(200)));
			} catch (const std::exception &e) {
				return fmt::format("reading driver events failed ({})", e.what());
			}
			if (!ev)
				continue;
			switch (ev->type) {
			case Type::events_lost:
				return std::string("driver events were lost (socket buffer overflow)");
			case Type::fault:
			case Type::memory_error:
			case Type::reset:
			case Type::job_timeout:
			case Type::device_added:
			case Type::device_removed:
				return fmt::format("driver event {} on NPU {}", to_string(ev->type), ev->device);
			default:
				break;
			}
		}
	}
};

HealthWatcher::HealthWatcher(DeviceTable &table, HealthOptions options)
	: table_(table), options_(options), events_(std::make_unique<EventSource>())
{
	if (!options_.checks)
		log("health checks are off (RBLN_DISABLE_HEALTHCHECKS or --disable-health-checks): "
		    "every NPU is offered Healthy");
	else
		log(fmt::format("health re-read from sysfs every {} ms", options_.interval.count()));
	resync("start");
	thread_ = std::thread([this] { run(); });
}

HealthWatcher::~HealthWatcher()
{
	stop_ = true;
	thread_.join();
}

void HealthWatcher::resync(const std::string &why)
{
	auto npus = scan_npus();
	std::map<unsigned, Npu> before;
	for (auto &n : table_.snapshot())
		before.emplace(n.index, n);
	for (auto &n : npus) {
		if (!options_.checks) {
			n.healthy = true;
			n.health_reason.clear();
		}
		auto old = before.find(n.index);
		if (old == before.end())
			log(fmt::format("NPU {} ({}) offered, {}{} ({})", n.index, n.uuid,
					n.healthy ? "Healthy" : "Unhealthy: ", n.health_reason, why));
		else if (old->second.healthy != n.healthy)
			log(fmt::format("NPU {} ({}) {}{} ({})", n.index, n.uuid,
					n.healthy ? "Healthy again" : "Unhealthy: ", n.health_reason, why));
		if (old != before.end())
			before.erase(old);
	}
	for (const auto &[index, n] : before)
		log(fmt::format("NPU {} ({}) gone ({})", index, n.uuid, why));
	table_.replace(std::move(npus));
}

void HealthWatcher::run()
{
	auto next_tick = std::chrono::steady_clock::now() + options_.interval;
	while (!stop_) {
		auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
			next_tick - std::chrono::steady_clock::now());
		// Short slices, so that a stop is noticed.
		auto why = events_->next(std::clamp(left, std::chrono::milliseconds(0), std::chrono::milliseconds(200)));
		if (stop_)
			break;
		try {
			if (why) {
				resync(*why);
			} else if (std::chrono::steady_clock::now() >= next_tick) {
				resync("periodic re-read");
				next_tick = std::chrono::steady_clock::now() + options_.interval;
			}
		} catch (const std::exception &e) {
			log(fmt::format("re-reading the NPUs failed: {}", e.what()));
		}
	}
}

} // namespace rbln::k8s
