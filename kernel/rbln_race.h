/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Race points: places where a KUnit test stops a thread to force an
 * interleaving that is otherwise a few instructions wide (and so was never
 * hit on purpose).  They compile to nothing outside the KUnit build.
 */
#ifndef RBLN_RACE_H
#define RBLN_RACE_H

#include <linux/compiler.h>

enum rbln_race_point {
	/* RECLAIM chose its victim and dropped clients_lock; nothing revoked yet. */
	RBLN_RACE_RECLAIM_CHOSEN,
	/* A CPU fault found the page to map; the page table is not filled yet. */
	RBLN_RACE_FAULT_FOUND,
	/*
	 * A handle was closed.  When its file is being released, the handles
	 * closed before it may be freed already, yet still in the file's table.
	 */
	RBLN_RACE_HANDLE_CLOSED,
	/* RESET revoked the other files and is about to reset the device. */
	RBLN_RACE_RESET_RECOVERING,
};

#if IS_ENABLED(CONFIG_DRM_RBLN_KUNIT_TEST)
/* Set by a test for its duration; called at every race point. */
extern void (*rbln_race_hook)(enum rbln_race_point point);

static inline void rbln_race_point(enum rbln_race_point point)
{
	void (*hook)(enum rbln_race_point point) = READ_ONCE(rbln_race_hook);

	if (hook)
		hook(point);
}
#else
static inline void rbln_race_point(enum rbln_race_point point) { }
#endif

#endif /* RBLN_RACE_H */
