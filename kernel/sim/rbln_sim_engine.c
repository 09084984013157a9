// SPDX-License-Identifier: GPL-2.0-only
/*
 * Simulated engines.  Pushing a job queues the engine's work item, which
 * copies the bytes with the CPU and "raises the interrupt": it calls the
 * core's completion hook.  A hung engine holds its job until it is reset or
 * un-hung.  A small job for an idle engine may run at once (engine_run_now),
 * the direct path that keeps a 4 KiB copy as cheap as a few system calls.
 */
#include <linux/sched.h>
#include <linux/string.h>

#include "../rbln_device.h"
#include "../rbln_gem.h"
#include "rbln_sim.h"

static struct rbln_sim_device *rbln_sim_of(struct rbln_device *rdev)
{
	return rbln_device_hw_priv(rdev);
}

static struct rbln_sim_engine *rbln_sim_engine_of(struct rbln_device *rdev, u32 chiplet,
						  enum drm_rbln_engine kind)
{
	return &rbln_sim_of(rdev)->engines[chiplet][kind];
}

/* The device memory of the simulator is host memory: the engine copies with the CPU. */
static int rbln_sim_execute(struct rbln_sim_device *sdev, struct rbln_hw_job *job)
{
	u32 i;

	if (READ_ONCE(sdev->chiplet_down[job->chiplet]))
		return -ENODEV;
	if (atomic_add_unless(&sdev->fail_next_jobs, -1, 0))
		return -EIO;
	for (i = 0; i < job->count; i++) {
		const struct drm_rbln_copy *c = &job->copies[i];
		struct rbln_bo *src = job->bos[2 * i], *dst = job->bos[2 * i + 1];

		/* The core placed both before handing the job over. */
		if (WARN_ON_ONCE(!READ_ONCE(src->vaddr) || !READ_ONCE(dst->vaddr)))
			return -ENODEV;
		memcpy(dst->vaddr + c->dst_offset, src->vaddr + c->src_offset, c->size);
		cond_resched();
	}
	return 0;
}

static void rbln_sim_engine_work(struct work_struct *work)
{
	struct rbln_sim_engine *e = container_of(work, struct rbln_sim_engine, work);
	struct rbln_hw_job *job;
	bool report;
	int status;

	spin_lock(&e->lock);
	job = e->hung ? NULL : e->job;
	spin_unlock(&e->lock);
	if (!job)
		return;
	status = rbln_sim_execute(e->sdev, job);
	spin_lock(&e->lock);
	report = e->job == job;		/* not taken back by a reset meanwhile */
	if (report)
		e->job = NULL;
	spin_unlock(&e->lock);
	if (report)
		rbln_hw_job_done(job, status);	/* the interrupt */
}

void rbln_sim_engine_push(struct rbln_device *rdev, struct rbln_hw_job *job)
{
	struct rbln_sim_engine *e = rbln_sim_engine_of(rdev, job->chiplet, job->engine);

	spin_lock(&e->lock);
	WARN_ON_ONCE(e->job);
	e->job = job;
	spin_unlock(&e->lock);
	queue_work(system_unbound_wq, &e->work);
}

int rbln_sim_engine_run_now(struct rbln_device *rdev, struct rbln_hw_job *job)
{
	struct rbln_sim_engine *e = rbln_sim_engine_of(rdev, job->chiplet, job->engine);
	bool busy;

	spin_lock(&e->lock);
	busy = e->hung || e->job;
	spin_unlock(&e->lock);
	return busy ? -EAGAIN : rbln_sim_execute(e->sdev, job);
}

void rbln_sim_engine_reset(struct rbln_device *rdev, u32 chiplet, enum drm_rbln_engine kind)
{
	struct rbln_sim_engine *e = rbln_sim_engine_of(rdev, chiplet, kind);

	spin_lock(&e->lock);
	e->job = NULL;
	e->hung = false;
	spin_unlock(&e->lock);
	/* A copy in progress finishes before the core frees its buffers. */
	cancel_work_sync(&e->work);
}

void rbln_sim_set_hang(struct rbln_device *rdev, u32 chiplet, enum drm_rbln_engine kind, bool on)
{
	struct rbln_sim_engine *e = rbln_sim_engine_of(rdev, chiplet, kind);
	bool kick;

	spin_lock(&e->lock);
	e->hung = on;
	kick = !on && e->job;
	spin_unlock(&e->lock);
	if (kick)
		queue_work(system_unbound_wq, &e->work);
}

void rbln_sim_fail_next_jobs(struct rbln_device *rdev, int n)
{
	atomic_set(&rbln_sim_of(rdev)->fail_next_jobs, n);
}

void rbln_sim_set_chiplet_down(struct rbln_device *rdev, u32 chiplet, bool down)
{
	WRITE_ONCE(rbln_sim_of(rdev)->chiplet_down[chiplet], down);
	rbln_hw_chiplet_lost(rdev, chiplet, down);
}

/* Faults cleared; a held job carries on. */
void rbln_sim_device_reset(struct rbln_device *rdev)
{
	struct rbln_sim_device *sdev = rbln_sim_of(rdev);
	unsigned int i, kind;

	atomic_set(&sdev->fail_next_jobs, 0);
	for (i = 0; i < RBLN_MAX_CHIPLETS; i++) {
		WRITE_ONCE(sdev->chiplet_down[i], false);
		for (kind = 0; kind < DRM_RBLN_ENGINE_COUNT; kind++)
			rbln_sim_set_hang(rdev, i, kind, false);
	}
}

void rbln_sim_engines_init(struct rbln_sim_device *sdev)
{
	unsigned int i, kind;

	atomic_set(&sdev->fail_next_jobs, 0);
	for (i = 0; i < RBLN_MAX_CHIPLETS; i++)
		for (kind = 0; kind < DRM_RBLN_ENGINE_COUNT; kind++) {
			struct rbln_sim_engine *e = &sdev->engines[i][kind];

			e->sdev = sdev;
			spin_lock_init(&e->lock);
			INIT_WORK(&e->work, rbln_sim_engine_work);
		}
}

/* After the core let go of the device: nothing runs any more. */
void rbln_sim_engines_fini(struct rbln_sim_device *sdev)
{
	unsigned int i, kind;

	for (i = 0; i < RBLN_MAX_CHIPLETS; i++)
		for (kind = 0; kind < DRM_RBLN_ENGINE_COUNT; kind++)
			cancel_work_sync(&sdev->engines[i][kind].work);
}
