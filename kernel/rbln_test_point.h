/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Test points: places where a KUnit test takes over the thread passing by,
 * to force an interleaving that is otherwise a few instructions wide (and so
 * was never hit on purpose), or to fail a step that cannot otherwise fail.
 * They compile to nothing outside the KUnit build.
 */
#ifndef RBLN_TEST_POINT_H
#define RBLN_TEST_POINT_H

#include <linux/compiler.h>

enum rbln_test_point_id {
	/* RECLAIM chose its victim and dropped clients_lock; nothing revoked yet. */
	RBLN_TP_RECLAIM_CHOSEN,
	/* A CPU fault found the page to map; the page table is not filled yet. */
	RBLN_TP_FAULT_FOUND,
	/*
	 * A handle was closed.  When its file is being released, the handles
	 * closed before it may be freed already, yet still in the file's table.
	 */
	RBLN_TP_HANDLE_CLOSED,
	/* RESET revoked the other files and is about to reset the device. */
	RBLN_TP_RESET_RECOVERING,
	/* The probe set everything up but the DRM device; an error here fails it. */
	RBLN_TP_PROBE_REGISTERING,
	/* The simulator found a device by id and dropped its lock. */
	RBLN_TP_SIM_FOUND,
	/*
	 * The scheduler killed a job that never ran: its fence has signalled,
	 * and free_job is about to end it (buffers back, WAIT's status).
	 */
	RBLN_TP_KILLED_JOB_ENDING,
	/* WAIT saw the job's fence signalled; it waits for the job's end next. */
	RBLN_TP_WAIT_ENDING,
	/* A scheduled job's end work starts: its fence has signalled, buffers not yet back. */
	RBLN_TP_JOB_END_WORK,
	/* A job run inside SUBMIT asks whether to yield; non-zero: its slice ran out. */
	RBLN_TP_DIRECT_SLICE,
};

#if IS_ENABLED(CONFIG_DRM_RBLN_KUNIT_TEST)
/* Set by a test for its duration; returns 0 or the error to fail the step with. */
extern int (*rbln_test_point_hook)(enum rbln_test_point_id point);

static inline int rbln_test_point(enum rbln_test_point_id point)
{
	int (*hook)(enum rbln_test_point_id point) = READ_ONCE(rbln_test_point_hook);

	return hook ? hook(point) : 0;
}
#else
static inline int rbln_test_point(enum rbln_test_point_id point)
{
	return 0;
}
#endif

#endif /* RBLN_TEST_POINT_H */
