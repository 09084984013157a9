// Every driver action that matters to a management daemon produces its
// netlink event, with the attributes that identify it.
#include <gtest/gtest.h>

#include "rbln/devmgr.hpp"
#include "rbln/events.hpp"
#include "rbln_test_util.h"

using namespace std::chrono_literals;
using Type = rbln::DriverEvent::Type;

namespace {

// The next event of NPU @device of @type, skipping others.
std::optional<rbln::DriverEvent> expect_event(rbln::EventListener &l, Type type, unsigned device)
{
	for (int i = 0; i < 50; i++) {
		auto ev = l.next(10s);
		if (!ev)
			break;
		if (ev->type == type && ev->device == device)
			return ev;
	}
	ADD_FAILURE() << "no " << rbln::to_string(type) << " event for NPU " << device;
	return std::nullopt;
}

} // namespace

TEST(Events, EachActionProducesItsEvent)
{
	rbln::EventListener events;

	ASSERT_EQ(rbln::test::sim_new_device("13 rebel100 32"), 0);
	expect_event(events, Type::device_added, 13);

	{
		auto dev = rbln::Device::open(13);
		const uint64_t id = dev.usage().client_id;
		dev.acquire();
		auto ev = expect_event(events, Type::acquired, 13);
		ASSERT_TRUE(ev);
		EXPECT_EQ(ev->client, id);
		EXPECT_EQ(ev->pid, unsigned(getpid()));
		dev.release();
		ev = expect_event(events, Type::released, 13);
		ASSERT_TRUE(ev);
		EXPECT_EQ(ev->client, id);

		// A hung engine: the job times out and the engine is reset.
		auto a = dev.allocate(8192, rbln::Placement::on_chiplet(2));
		auto b = dev.allocate(8192, rbln::Placement::on_chiplet(2));
		ASSERT_EQ(rbln::test::write_file("/sys/kernel/debug/rbln/rbln13/hang", "2 neural_dma"), 0);
		auto job = dev.submit(rbln::Engine::neural_dma, 2, {{a, b, 0, 4096, 4096}});
		ev = expect_event(events, Type::job_timeout, 13);
		ASSERT_TRUE(ev);
		EXPECT_EQ(ev->chiplet, 2u);
		EXPECT_EQ(ev->engine, uint32_t(rbln::Engine::neural_dma));
		EXPECT_EQ(ev->client, id);
		EXPECT_THROW(job.wait(), rbln::Error);

		// Another client, forcibly reclaimed by root.
		auto other = rbln::Device::open(13);
		auto held = other.allocate(1 << 20, rbln::Placement::on_chiplet(0), rbln::AllocMode::eager);
		EXPECT_EQ(dev.reclaim(other.usage().client_id, true), 1u << 20);
		ev = expect_event(events, Type::reclaimed, 13);
		ASSERT_TRUE(ev);
		EXPECT_EQ(ev->bytes, 1u << 20);
	}

	ASSERT_EQ(rbln::test::write_file("/sys/kernel/debug/rbln/rbln13/memory_error", "3"), 0);
	auto ev = expect_event(events, Type::memory_error, 13);
	ASSERT_TRUE(ev);
	EXPECT_EQ(ev->chiplet, 3u);
	expect_event(events, Type::fault, 13);

	ASSERT_EQ(rbln::test::sim_del_device(13), 0);
	expect_event(events, Type::device_removed, 13);
}

// Events name every user's processes and clients, which LIST_CLIENTS shows
// only to root: an unprivileged socket may not join the group at all.
TEST(Events, OnlyPrivilegedSocketsMayListen)
{
	int status = rbln::test::run_as_nobody(true, [] {
		try {
			rbln::EventListener listener;
		} catch (const rbln::Error &e) {
			return std::string(e.what()).find("CAP_SYS_ADMIN") != std::string::npos ? 0 : 4;
		}
		return 1;	// joined
	});
	EXPECT_EQ(status, 0) << "1: an unprivileged socket joined; 4: an unclear error";
	EXPECT_NO_THROW(rbln::EventListener()) << "root may";
}

// A listener that falls behind loses events (the kernel drops them,
// ENOBUFS); the next read says so with an events_lost event, which tells a
// monitor to re-read the devices.  Before, the overflow was dropped silently.
TEST(Events, AnOverflowIsReportedAsEventsLost)
{
	rbln::EventListener events;
	{
		auto dev = rbln::Device::open(0);
		for (int i = 0; i < 2000; i++) {
			dev.acquire();
			dev.release();
		}
	}
	bool lost = false;
	int seen = 0;
	while (auto ev = events.next(1s)) {
		seen++;
		if (ev->type == Type::events_lost) {
			lost = true;
			EXPECT_EQ(ev->device, ~0u);
			EXPECT_STREQ(rbln::to_string(ev->type), "events_lost");
			break;
		}
	}
	EXPECT_TRUE(lost) << seen << " events read, none said the rest were lost";
}
