/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A fake backend for the KUnit suites: rbln_hw.h's ops and nothing else, so
 * that the core is tested against the contract alone, with no simulator (or
 * any other backend) linked.  Its engines hold what they are pushed until
 * the test completes it; its pushes and resets fail when told to; and it
 * notes every op called after rbln_device_destroy() (mem_free excepted, which
 * the contract allows later), for the test to check.
 */
#ifndef RBLN_FAKE_HW_H
#define RBLN_FAKE_HW_H

#include <kunit/test.h>
#include <linux/atomic.h>
#include <linux/spinlock.h>
#include <linux/wait.h>

#include "../rbln_hw.h"

struct rbln_fake_hw {
	struct kunit *test;
	struct device *dev;		/* the parent: a KUnit device */
	struct rbln_device *rdev;
	struct rbln_hw_info info;
	spinlock_t lock;		/* pushed */
	struct rbln_hw_job *pushed[RBLN_MAX_CHIPLETS][DRM_RBLN_ENGINE_COUNT];
	wait_queue_head_t pushed_wait;
	/* What the test tells it. */
	int push_error;			/* pushes return this (0: they take the job) */
	int engine_reset_error;
	int device_reset_error;
	/* What the core did to it. */
	atomic_t pushes;		/* taken or refused */
	atomic_t engine_resets;
	atomic_t device_resets;
	atomic_t sync_irqs;
	atomic_t allocs, frees;
	atomic_t bad_calls;		/* against the contract: see rbln_fake_hw.c */
	const char *bad_call;		/* the first of them */
	bool destroyed;			/* rbln_device_destroy() returned */
};

/*
 * A device of @chiplets chiplets (1: an ATOM, 4: a Rebel100) with 64 MiB,
 * whose chiplet i has the engines @engines[i] (BIT(enum drm_rbln_engine)).
 * Removed when the test ends, after which the test checks that no op came
 * late and that every backing was freed.
 */
struct rbln_fake_hw *rbln_fake_hw_create(struct kunit *test, unsigned int chiplets,
					 const u32 *engines);
/* rbln_device_destroy() now, with files possibly open and jobs on the engines. */
void rbln_fake_hw_remove(struct rbln_fake_hw *fake);

/* The job pushed to an engine, waited for (run_job is the scheduler's work). */
struct rbln_hw_job *rbln_fake_hw_wait_pushed(struct rbln_fake_hw *fake, u32 chiplet,
					     enum drm_rbln_engine kind);
/*
 * The engine's interrupt: its job copied (on @status 0) and reported through
 * rbln_hw_job_done() with @status.  The job must have been pushed.
 */
void rbln_fake_hw_complete(struct rbln_fake_hw *fake, u32 chiplet, enum drm_rbln_engine kind,
			   int status);
/* Whether an engine holds a job now. */
bool rbln_fake_hw_busy(struct rbln_fake_hw *fake, u32 chiplet, enum drm_rbln_engine kind);

#endif /* RBLN_FAKE_HW_H */
