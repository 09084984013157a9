// SPDX-License-Identifier: GPL-2.0-only
/*
 * Simulated engines.  Pushing a job queues the engine's work item, which
 * copies the bytes with the CPU, a chunk at a time, and "raises the
 * interrupt": it calls the core's completion hook.  A hung engine holds its
 * job until it is reset or un-hung.  A job of up to RBLN_HW_RUN_NOW_MAX_BYTES
 * for an idle engine may run at once (engine_run_now), the direct path that
 * keeps a 4 KiB copy as cheap as a few system calls and a job of megabytes as
 * fast as the copy itself.
 */
#include <linux/dma-direct.h>
#include <linux/minmax.h>
#include <linux/scatterlist.h>
#include <linux/sched.h>
#include <linux/string.h>
#include <linux/workqueue.h>

#include "rbln_sim.h"

/*
 * The engines' work items.  They signal fences (the simulated interrupt), so
 * they run in a queue that memory reclaim cannot starve (WQ_MEM_RECLAIM: a
 * reclaim may wait for those fences), not in system_unbound_wq, which 7.x
 * deprecates (it warns at its first use).
 */
static struct workqueue_struct *rbln_sim_wq;

int rbln_sim_wq_init(void)
{
	rbln_sim_wq = alloc_workqueue("rbln-sim", WQ_UNBOUND | WQ_MEM_RECLAIM, 0);
	return rbln_sim_wq ? 0 : -ENOMEM;
}

void rbln_sim_wq_fini(void)
{
	destroy_workqueue(rbln_sim_wq);
}

static struct rbln_sim_device *rbln_sim_of(struct rbln_device *rdev)
{
	return rbln_device_hw_priv(rdev);
}

static struct rbln_sim_engine *rbln_sim_engine_of(struct rbln_device *rdev, u32 chiplet,
						  enum drm_rbln_engine kind)
{
	return &rbln_sim_of(rdev)->engines[chiplet][kind];
}

/* Whether engine @e still runs its pushed @job: a reset takes it back. */
static bool rbln_sim_still_running(struct rbln_sim_engine *e, const struct rbln_hw_job *job)
{
	return READ_ONCE(e->job) == job;
}

/* One chunk's fault-injected delay (slow_us), cut short by a reset. */
static void rbln_sim_slow_chunk(struct rbln_sim_engine *e, const struct rbln_hw_job *job)
{
	u32 us = READ_ONCE(e->sdev->slow_us);

	if (us)
		wait_event_timeout(e->reset_wait, !rbln_sim_still_running(e, job),
				   usecs_to_jiffies(us));
}

/*
 * Whether the engine stops before its next chunk: a pushed job taken back by
 * a reset, or a direct one (@e NULL) that yields its engine.  A direct job
 * never sleeps holding its engine (no cond_resched(): a task its cgroup's
 * cpu.max throttles would sleep there for seconds, and everyone else wait);
 * on a kernel that preempts only where asked, it is throttled once it has
 * let the engine go.  The engine's work item and copy_bench's copy (no @job)
 * may sleep.
 */
static bool rbln_sim_stop(struct rbln_sim_engine *e, const struct rbln_hw_job *job)
{
	if (e) {
		rbln_sim_slow_chunk(e, job);
		cond_resched();
		return !rbln_sim_still_running(e, job);
	}
	if (job)
		return rbln_hw_job_should_yield(job);
	cond_resched();
	return false;
}

u64 rbln_sim_copy(struct rbln_sim_engine *e, const struct rbln_hw_job *job, void *dst,
		  const void *src, u64 size)
{
	u64 done, n;

	for (done = 0; done < size; done += n) {
		if (rbln_sim_stop(e, job))
			break;
		n = min_t(u64, size - done, RBLN_SIM_CHUNK);
		memcpy(dst + done, src + done, n);
	}
	return done;
}

/*
 * Where a copy is in a buffer handed over as DMA addresses: its segment and
 * the bytes of it already copied.  It only moves forward, so a copy of N
 * segments walks the table once (a walk from its start for each segment
 * was quadratic: 4096 page segments a side in a 16 MiB job).
 */
struct rbln_sim_dma_cursor {
	struct scatterlist *sg;
	unsigned int left;		/* mapped segments from sg on */
	u64 used;			/* bytes of sg already copied */
};

/*
 * The CPU address the cursor is at, and how many bytes from there are
 * contiguous (the rest of its segment); NULL past the end.  The simulated
 * device has no IOMMU, so a bus address is a physical one.
 */
static void *rbln_sim_dma_next(struct device *dev, struct rbln_sim_dma_cursor *c, u64 *len)
{
	while (c->left && c->used == sg_dma_len(c->sg)) {
		c->sg = --c->left ? sg_next(c->sg) : NULL;
		c->used = 0;
	}
	if (!c->left) {
		*len = 0;
		return NULL;
	}
	*len = sg_dma_len(c->sg) - c->used;
	return phys_to_virt(dma_to_phys(dev, sg_dma_address(c->sg) + c->used));
}

/* The cursor moved @n bytes on (where a yielded job resumes). */
static void rbln_sim_dma_skip(struct device *dev, struct rbln_sim_dma_cursor *c, u64 n)
{
	u64 len;

	while (n && rbln_sim_dma_next(dev, c, &len)) {
		len = min(len, n);
		c->used += len;
		n -= len;
	}
}

/*
 * A copy through the buffers' DMA addresses, a segment (at most a chunk) at
 * a time, from its byte *@done on, which it moves on as it copies; -EIO if a
 * table is shorter than the copy.  Each sg table holds exactly this copy's
 * bytes.
 */
static int rbln_sim_dma_copy(struct rbln_sim_device *sdev, struct rbln_sim_engine *e,
			     const struct rbln_hw_job *job, const struct rbln_hw_buffer *dst,
			     const struct rbln_hw_buffer *src, u64 size, u64 *done)
{
	struct rbln_sim_dma_cursor s = { .sg = src->sgt->sgl, .left = src->sgt->nents };
	struct rbln_sim_dma_cursor d = { .sg = dst->sgt->sgl, .left = dst->sgt->nents };
	struct device *dev = &sdev->dev;
	u64 n, copied;

	rbln_sim_dma_skip(dev, &s, *done);
	rbln_sim_dma_skip(dev, &d, *done);
	while (*done < size) {
		u64 src_len, dst_len;
		void *from = rbln_sim_dma_next(dev, &s, &src_len);
		void *to = rbln_sim_dma_next(dev, &d, &dst_len);

		if (WARN_ON_ONCE(!from || !to))
			return -EIO;
		n = min3(size - *done, src_len, dst_len);
		copied = rbln_sim_copy(e, job, to, from, n);
		s.used += copied;
		d.used += copied;
		*done += copied;
		if (copied < n)
			break;
	}
	return 0;
}

/*
 * The device memory of the simulator is host memory: the engine copies with
 * the CPU, a chunk at a time, and stops between chunks once reset (the
 * contract of engine_reset, rbln_hw.h).  @e is NULL on the direct path,
 * which stops between chunks to yield its engine: it notes where in
 * job->resume (-EINPROGRESS), and the push that follows goes on from there.
 */
static int rbln_sim_execute(struct rbln_sim_device *sdev, struct rbln_sim_engine *e,
			    struct rbln_hw_job *job)
{
	u32 i;

	if (READ_ONCE(sdev->chiplet_down[job->chiplet]))
		return -ENODEV;
	/* A resumed job failed or not already, when it started. */
	if (!job->resume.copy && !job->resume.offset &&
	    atomic_add_unless(&sdev->fail_next_jobs, -1, 0))
		return -EIO;
	for (i = job->resume.copy; i < job->count; i++) {
		const struct drm_rbln_copy *c = &job->copies[i];
		const struct rbln_hw_buffer *src = &job->bufs[2 * i], *dst = &job->bufs[2 * i + 1];
		u64 from = i == job->resume.copy ? job->resume.offset : 0, done = from;

		if (src->sgt && dst->sgt) {
			int ret = rbln_sim_dma_copy(sdev, e, job, dst, src, c->size, &done);

			if (ret)
				return ret;
		} else {
			done += rbln_sim_copy(e, job, dst->cpu + c->dst_offset + from,
					      src->cpu + c->src_offset + from, c->size - from);
		}
		if (done < c->size) {
			if (e)
				return -ECANCELED;	/* nobody hears it: the job was taken back */
			if (!i && !done)
				return -EAGAIN;		/* yielded before its first byte */
			job->resume.copy = i;
			job->resume.offset = done;
			return -EINPROGRESS;
		}
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
	status = rbln_sim_execute(e->sdev, e, job);
	spin_lock(&e->lock);
	report = e->job == job;		/* not taken back by a reset meanwhile */
	if (report)
		e->job = NULL;
	spin_unlock(&e->lock);
	if (report)
		rbln_hw_job_done(job, status);	/* the interrupt */
}

int rbln_sim_engine_push(struct rbln_device *rdev, struct rbln_hw_job *job)
{
	struct rbln_sim_engine *e = rbln_sim_engine_of(rdev, job->chiplet, job->engine);
	bool busy;

	spin_lock(&e->lock);
	busy = WARN_ON_ONCE(e->job);
	if (!busy)
		e->job = job;
	spin_unlock(&e->lock);
	if (busy)
		return -EBUSY;	/* the core pushed a second job: refuse it, keep the first */
	queue_work(rbln_sim_wq, &e->work);
	return 0;
}

int rbln_sim_engine_run_now(struct rbln_device *rdev, struct rbln_hw_job *job)
{
	struct rbln_sim_engine *e = rbln_sim_engine_of(rdev, job->chiplet, job->engine);
	bool busy;

	/* A slowed engine does not run in SUBMIT, which must end in bounded time. */
	spin_lock(&e->lock);
	busy = e->hung || e->job || READ_ONCE(e->sdev->slow_us) || READ_ONCE(e->sdev->no_direct);
	spin_unlock(&e->lock);
	return busy ? -EAGAIN : rbln_sim_execute(e->sdev, NULL, job);
}

/* Fault injection: whether this reset is one of the next N that fail. */
static bool rbln_sim_reset_fails(struct rbln_sim_device *sdev)
{
	return atomic_add_unless(&sdev->fail_next_resets, -1, 0);
}

/*
 * An injected failure still takes the job back (the contract: the backend
 * never touches it again), but leaves the engine hung: the device is wedged
 * until a device reset works.
 */
int rbln_sim_engine_reset(struct rbln_device *rdev, u32 chiplet, enum drm_rbln_engine kind)
{
	struct rbln_sim_engine *e = rbln_sim_engine_of(rdev, chiplet, kind);
	bool fails = rbln_sim_reset_fails(e->sdev);

	spin_lock(&e->lock);
	e->job = NULL;
	e->hung = fails;
	spin_unlock(&e->lock);
	wake_up_all(&e->reset_wait);
	/* The chunk in progress ends before the core frees the buffers. */
	cancel_work_sync(&e->work);
	return fails ? -EIO : 0;
}

void rbln_sim_sync_irq(struct rbln_device *rdev)
{
	struct rbln_sim_device *sdev = rbln_sim_of(rdev);
	unsigned int i, kind;

	for (i = 0; i < RBLN_MAX_CHIPLETS; i++)
		for (kind = 0; kind < DRM_RBLN_ENGINE_COUNT; kind++)
			flush_work(&sdev->engines[i][kind].work);
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
		queue_work(rbln_sim_wq, &e->work);
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

/* Faults cleared; a held job carries on.  An injected failure clears nothing. */
int rbln_sim_device_reset(struct rbln_device *rdev)
{
	struct rbln_sim_device *sdev = rbln_sim_of(rdev);
	unsigned int i, kind;

	if (rbln_sim_reset_fails(sdev))
		return -EIO;
	atomic_set(&sdev->fail_next_jobs, 0);
	for (i = 0; i < RBLN_MAX_CHIPLETS; i++) {
		WRITE_ONCE(sdev->chiplet_down[i], false);
		for (kind = 0; kind < DRM_RBLN_ENGINE_COUNT; kind++)
			rbln_sim_set_hang(rdev, i, kind, false);
	}
	return 0;
}

void rbln_sim_engines_init(struct rbln_sim_device *sdev)
{
	unsigned int i, kind;

	atomic_set(&sdev->fail_next_jobs, 0);
	atomic_set(&sdev->fail_next_resets, 0);
	for (i = 0; i < RBLN_MAX_CHIPLETS; i++)
		for (kind = 0; kind < DRM_RBLN_ENGINE_COUNT; kind++) {
			struct rbln_sim_engine *e = &sdev->engines[i][kind];

			e->sdev = sdev;
			spin_lock_init(&e->lock);
			INIT_WORK(&e->work, rbln_sim_engine_work);
			init_waitqueue_head(&e->reset_wait);
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
