// SPDX-License-Identifier: GPL-2.0-only
/* Busy time and utilisation (rbln_busy.c). */
#include <kunit/test.h>
#include <linux/delay.h>
#include <linux/ktime.h>

#include "../rbln_device.h"

static void rbln_busy_idle_is_zero(struct kunit *test)
{
	struct rbln_busy busy;

	rbln_busy_init(&busy);
	KUNIT_EXPECT_EQ(test, rbln_busy_total_ns(&busy), 0ULL);
	KUNIT_EXPECT_EQ(test, rbln_busy_utilization(&busy), 0U);
}

/* Overlapping jobs count once: busy time is "some engine was working". */
static void rbln_busy_overlap_counts_once(struct kunit *test)
{
	struct rbln_busy busy;
	u64 start, wall, total;

	rbln_busy_init(&busy);
	start = ktime_get_ns();
	rbln_busy_begin(&busy);
	rbln_busy_begin(&busy);
	usleep_range(2000, 3000);
	rbln_busy_end(&busy);
	usleep_range(2000, 3000);
	rbln_busy_end(&busy);
	wall = ktime_get_ns() - start;
	total = rbln_busy_total_ns(&busy);
	KUNIT_EXPECT_GE(test, total, 4000ULL * NSEC_PER_USEC);
	KUNIT_EXPECT_LE(test, total, wall);
	/* Idle now: the total stays. */
	usleep_range(1000, 2000);
	KUNIT_EXPECT_EQ(test, rbln_busy_total_ns(&busy), total);
}

/* A running job counts up to now, before it ends. */
static void rbln_busy_running_job_counts(struct kunit *test)
{
	struct rbln_busy busy;
	u64 first;

	rbln_busy_init(&busy);
	rbln_busy_begin(&busy);
	usleep_range(1000, 2000);
	first = rbln_busy_total_ns(&busy);
	KUNIT_EXPECT_GE(test, first, 1000ULL * NSEC_PER_USEC);
	usleep_range(1000, 2000);
	KUNIT_EXPECT_GT(test, rbln_busy_total_ns(&busy), first);
	rbln_busy_end(&busy);
}

/* Utilisation is busy time over a window of at least one second. */
static void rbln_busy_utilization_window(struct kunit *test)
{
	struct rbln_busy busy;
	u32 util;

	rbln_busy_init(&busy);
	/*
	 * A window that started 2 s ago with 500 ms of busy time in it: 25%,
	 * or 24% if the clock moved on before the figure was taken.
	 */
	busy.sample_time_ns = ktime_get_ns() - 2 * NSEC_PER_SEC;
	busy.sample_busy_ns = 0;
	busy.total_ns = NSEC_PER_SEC / 2;
	util = rbln_busy_utilization(&busy);
	KUNIT_EXPECT_GE(test, util, 24U);
	KUNIT_EXPECT_LE(test, util, 25U);
	/* Within the next window the figure holds still. */
	busy.total_ns += NSEC_PER_SEC / 10;
	KUNIT_EXPECT_EQ(test, rbln_busy_utilization(&busy), util);
	/* Busy all of a new window: 100%, never more. */
	busy.sample_time_ns = ktime_get_ns() - NSEC_PER_SEC;
	busy.sample_busy_ns = busy.total_ns;
	busy.total_ns += 3 * NSEC_PER_SEC;
	KUNIT_EXPECT_EQ(test, rbln_busy_utilization(&busy), 100U);
}

static struct kunit_case rbln_busy_cases[] = {
	KUNIT_CASE(rbln_busy_idle_is_zero),
	KUNIT_CASE(rbln_busy_overlap_counts_once),
	KUNIT_CASE(rbln_busy_running_job_counts),
	KUNIT_CASE(rbln_busy_utilization_window),
	{}
};

static struct kunit_suite rbln_busy_suite = {
	.name = "rbln_busy",
	.test_cases = rbln_busy_cases,
};
kunit_test_suite(rbln_busy_suite);
