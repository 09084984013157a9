// SPDX-License-Identifier: GPL-2.0-only
/*
 * Device busy time and utilisation.  Job execution brackets every job with
 * rbln_busy_begin()/rbln_busy_end(); overlapping jobs count once, so busy
 * time is "some engine was working", the definition nvidia-smi uses.
 *
 * Jobs begin and end in process context only (run_job, SUBMIT, the timeout
 * handler, removal, and the backend's completion hook, which rbln_hw.h
 * requires to run in a threaded interrupt handler or a work item, and which
 * checks with might_sleep()), and so do the readers: the lock leaves
 * interrupts and bottom halves on, which keeps it off the cost of every job.
 */
#include <linux/ktime.h>
#include <linux/math64.h>

#include "rbln_device.h"

#define RBLN_UTIL_WINDOW_NS	NSEC_PER_SEC

void rbln_busy_init(struct rbln_busy *busy)
{
	spin_lock_init(&busy->lock);
	busy->active = 0;
	busy->total_ns = 0;
	busy->sample_time_ns = ktime_get_ns();
	busy->sample_busy_ns = 0;
	busy->utilization = 0;
}

/*
 * Begin and end return the time they read, so a job's own figures need no
 * clock read of their own.  Read under the lock: the busy intervals and the
 * totals readers see then follow the lock's order.
 */
u64 rbln_busy_begin(struct rbln_busy *busy)
{
	u64 now;

	spin_lock(&busy->lock);
	now = ktime_get_ns();
	if (busy->active++ == 0)
		busy->active_since_ns = now;
	spin_unlock(&busy->lock);
	return now;
}

u64 rbln_busy_end(struct rbln_busy *busy)
{
	u64 now;

	spin_lock(&busy->lock);
	now = ktime_get_ns();
	if (!WARN_ON_ONCE(busy->active == 0) && --busy->active == 0)
		busy->total_ns += now - busy->active_since_ns;
	spin_unlock(&busy->lock);
	return now;
}

static u64 rbln_busy_total_locked(const struct rbln_busy *busy, u64 now)
{
	return busy->total_ns + (busy->active ? now - busy->active_since_ns : 0);
}

u64 rbln_busy_total_ns(struct rbln_busy *busy)
{
	u64 total;

	spin_lock(&busy->lock);
	total = rbln_busy_total_locked(busy, ktime_get_ns());
	spin_unlock(&busy->lock);
	return total;
}

u32 rbln_busy_utilization(struct rbln_busy *busy)
{
	u64 now, total, elapsed;
	u32 util;

	spin_lock(&busy->lock);
	now = ktime_get_ns();
	elapsed = now - busy->sample_time_ns;
	if (elapsed >= RBLN_UTIL_WINDOW_NS) {
		total = rbln_busy_total_locked(busy, now);
		busy->utilization = min_t(u64, 100,
			div64_u64((total - busy->sample_busy_ns) * 100, elapsed));
		busy->sample_time_ns = now;
		busy->sample_busy_ns = total;
	}
	util = busy->utilization;
	spin_unlock(&busy->lock);
	return util;
}
