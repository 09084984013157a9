// SPDX-License-Identifier: GPL-2.0-only
/*
 * Scheduler glue.  Each present engine of each chiplet has a DRM GPU
 * scheduler with a credit limit of one (the engine runs one job at a time).
 * Each file gets an entity on an engine with its first scheduled job there:
 * its jobs run in the order it submitted them, and one file's job waiting for
 * its inputs does not hold up other files.  run_job hands a job to the
 * backend and returns its hardware fence; the backend reports the end
 * through rbln_hw_job_done().  A job still running after job_timeout_ms is
 * the scheduler's timeout: the engine is reset (TDR), the job ends with
 * -ETIMEDOUT and the engine goes on with the next one.
 */
#include <linux/dma-fence.h>
#include <linux/moduleparam.h>
#include <linux/slab.h>
#include <drm/drm_drv.h>
#include <drm/drm_print.h>

#include "rbln_compat.h"
#include "rbln_device.h"
#include "rbln_events.h"
#include "rbln_job.h"
#include "rbln_sync.h"
#include "rbln_test_point.h"

static unsigned int job_timeout_ms = 1000;
module_param(job_timeout_ms, uint, 0644);
MODULE_PARM_DESC(job_timeout_ms,
	"A job on a hung engine is cancelled and the engine reset after this long (ms)");

static struct rbln_job *to_rbln_job(struct drm_sched_job *sched_job)
{
	return container_of(sched_job, struct rbln_job, base);
}

/* Never shorter than the backend says its biggest job may take. */
static long rbln_sched_timeout(const struct rbln_device *rdev)
{
	return msecs_to_jiffies(max3(READ_ONCE(job_timeout_ms), rdev->info.job_min_timeout_ms, 1U));
}

int rbln_job_precheck(struct rbln_job *job)
{
	struct rbln_engine *engine = job->engine;
	u32 i;

	/* A job that ran in part inside SUBMIT is running: a close lets it finish. */
	if (READ_ONCE(job->client->closing) && !job->ran_part)
		return -ECANCELED;
	if (READ_ONCE(engine->chiplet->rdev->dying) || READ_ONCE(engine->chiplet->down))
		return -ENODEV;
	if (READ_ONCE(engine->chiplet->rdev->wedged))
		return -EIO;
	/* A job whose input failed fails with the same error, without running. */
	for (i = 0; i < job->nr_deps; i++) {
		int error = rbln_fence_error(job->deps[i]);

		if (error)
			return error;
	}
	return 0;
}

static struct dma_fence *rbln_sched_run_job(struct drm_sched_job *sched_job)
{
	struct rbln_job *job = to_rbln_job(sched_job);
	struct rbln_engine *engine = job->engine;
	struct rbln_device *rdev = engine->chiplet->rdev;
	/* Nothing here may allocate or wait for a fence: lockdep checks it. */
	bool cookie = dma_fence_begin_signalling();
	struct dma_fence *fence;
	int ret;

	/* Allocated at submit. */
	if (WARN_ON_ONCE(!job->spare_fence)) {
		if (rbln_job_claim_end(job))
			rbln_job_end(job, -ENOMEM);
		dma_fence_end_signalling(cookie);
		return ERR_PTR(-ENOMEM);
	}
	fence = rbln_fence_start(job->spare_fence, engine);
	job->spare_fence = NULL;
	job->hw_fence = dma_fence_get(fence);
	ret = rbln_job_precheck(job) ?: rbln_job_hw_buffers(job);
	if (!ret && sched_job->s_fence->finished.error)
		ret = sched_job->s_fence->finished.error;
	if (!ret) {
		/* Under the lock, so removal either sees this job or stops it first. */
		spin_lock(&engine->active_lock);
		if (READ_ONCE(rdev->dying)) {
			ret = -ENODEV;
		} else {
			rbln_job_begin(job);
			engine->active = job;
			ret = rbln_hw_engine_push(rdev, &job->hw);
			/* Not taken: the backend will never report it. */
			if (ret)
				engine->active = NULL;
		}
		spin_unlock(&engine->active_lock);
	}
	if (ret && rbln_job_claim_end(job))
		rbln_job_end(job, ret);
	dma_fence_end_signalling(cookie);
	return fence;
}

/* The engine's job ended (or was taken back): it is no longer on the hardware. */
static void rbln_engine_clear_active(struct rbln_engine *engine, struct rbln_job *job)
{
	spin_lock(&engine->active_lock);
	if (engine->active == job)
		engine->active = NULL;
	spin_unlock(&engine->active_lock);
}

void rbln_hw_job_done(struct rbln_hw_job *hw, int status)
{
	struct rbln_job *job = container_of(hw, struct rbln_job, hw);
	bool cookie;

	might_sleep();		/* the contract (rbln_hw.h): busy time's lock keeps irqs on */
	cookie = dma_fence_begin_signalling();
	rbln_engine_clear_active(job->engine, job);
	if (rbln_job_claim_end(job))
		rbln_job_end(job, status);
	dma_fence_end_signalling(cookie);
}

/* From the job's end work: the event allocates, which the timeout handler may not. */
void rbln_job_timeout_report(struct rbln_job *job)
{
	struct rbln_engine *engine = job->engine;
	struct rbln_device *rdev = engine->chiplet->rdev;

	rbln_event_send(&(struct rbln_event){
		.type = RBLN_GENL_EVENT_JOB_TIMEOUT, .device = rdev->info.index,
		.has = RBLN_EV_CHIPLET | RBLN_EV_ENGINE | RBLN_EV_CLIENT,
		.chiplet = engine->chiplet->index, .engine = engine->kind,
		.client = job->client->id, .pid = pid_nr(job->client->creator),
	});
	drm_info(&rdev->drm, "chiplet %u %s: job %llu timed out after %u ms, engine reset\n",
		 engine->chiplet->index, rbln_engine_name(engine->kind), job->seqno,
		 READ_ONCE(job_timeout_ms));
}

/*
 * drm_sched_stop() took the hardware fences off the pending jobs.  Given back
 * (signalled by now, or when the job ends), the restart ends each job with
 * its own fence's result instead of -ECANCELED: the timed-out one with
 * -ETIMEDOUT, and one that is still running (after a finished job whose
 * free_job came late) when it really ends.
 */
static void rbln_sched_restore_parents(struct drm_gpu_scheduler *sched)
{
	struct drm_sched_job *sched_job;

	spin_lock(&sched->job_list_lock);
	list_for_each_entry(sched_job, &sched->pending_list, list) {
		struct rbln_job *job = to_rbln_job(sched_job);

		if (!sched_job->s_fence->parent && job->hw_fence)
			sched_job->s_fence->parent = dma_fence_get(job->hw_fence);
	}
	spin_unlock(&sched->job_list_lock);
}

/* TDR: the engine's job ran too long; reset the engine and go on. */
static enum drm_gpu_sched_stat rbln_sched_timedout_job(struct drm_sched_job *sched_job)
{
	struct rbln_job *job = to_rbln_job(sched_job);
	struct rbln_engine *engine = job->engine;
	struct rbln_device *rdev = engine->chiplet->rdev;
	bool reset, cookie;

#ifdef RBLN_PROBE_DRM_SCHED_STAT_NO_HANG
	/* It ended as the timer fired: nothing hung, nothing to reset. */
	if (test_bit(0, &job->ended))
		return DRM_GPU_SCHED_STAT_NO_HANG;
#endif
	/*
	 * The jobs behind this one cannot signal until it is done: nothing here
	 * may allocate.  The stop and the reset wait for work items that signal
	 * fences themselves (run_job's, the engine's), which a signalling
	 * section may not wait for; the rest is one.
	 */
	drm_sched_stop(&engine->sched, sched_job);
	reset = !test_bit(0, &job->ended);
	if (reset) {
		int err = rbln_hw_engine_reset(rdev, engine->chiplet->index, engine->kind);

		if (err)
			rbln_device_wedge(rdev, err);
	}
	cookie = dma_fence_begin_signalling();
	if (reset) {
		rbln_engine_clear_active(engine, job);
		if (rbln_job_claim_end(job)) {
			atomic_inc(&engine->resets);
			job->timed_out = true;	/* its end work reports it */
			rbln_job_end(job, -ETIMEDOUT);
		}
	}
	rbln_sched_restore_parents(&engine->sched);
	rbln_sched_start(&engine->sched);
	dma_fence_end_signalling(cookie);
	return RBLN_SCHED_STAT_RESET;
}

/* free_job's work, in the module's queue (see rbln_sched_free_job). */
static void rbln_sched_free_job_work(struct work_struct *work)
{
	struct rbln_job *job = container_of(work, struct rbln_job, free_work);
	struct drm_sched_job *sched_job = &job->base;

	/*
	 * Killed before it ran: its entity was destroyed with the job still
	 * waiting for its inputs, which only removal does (close and revocation
	 * drain a file's jobs first), when the remover's wait for the queue was
	 * cut short (it was killed).  It still has to end: -ENODEV, as for the
	 * jobs removal ends otherwise (see the UAPI).
	 */
	if (rbln_job_claim_end(job)) {
		struct drm_sched_fence *s_fence = sched_job->s_fence;

		rbln_test_point(RBLN_TP_KILLED_JOB_ENDING);
		job->scheduled = false;		/* its fences are the scheduler's already */
		/* A parent, for the pins it holds (see rbln_fence.c). */
		if (!s_fence->parent && job->spare_fence) {
			smp_store_release(&s_fence->parent,
					  rbln_fence_start_ended(job->spare_fence,
								 &job->engine->chiplet->rdev->drm,
								 -ENODEV));
			job->spare_fence = NULL;
		}
		rbln_job_end(job, -ENODEV);
	}
	drm_sched_job_cleanup(sched_job);
	atomic_dec(&job->engine->unfreed);
	wake_up_all(&job->engine->chiplet->rdev->sched_idle);
	rbln_job_put(job);
}

/*
 * The scheduler calls this from its own work, which removal waits for, but a
 * killed entity's jobs come from system_wq (schedule_work(), 6.1's too),
 * which module unload cannot wait for.  So everything is done in the
 * module's queue, which unload drains (rbln_jobs_fini), and nothing here
 * runs after handing it over.
 */
static void rbln_sched_free_job(struct drm_sched_job *sched_job)
{
	rbln_jobs_queue_work(&to_rbln_job(sched_job)->free_work);
}

static const struct drm_sched_backend_ops rbln_sched_ops = {
	.run_job = rbln_sched_run_job,
	.timedout_job = rbln_sched_timedout_job,
	.free_job = rbln_sched_free_job,
};

void rbln_sched_push(struct rbln_job *job)
{
	struct rbln_engine *engine = job->engine;

	lockdep_assert_held(&engine->submit_lock);
	/* job_timeout_ms may change at run time; the next timer uses it. */
	WRITE_ONCE(engine->sched.timeout, rbln_sched_timeout(engine->chiplet->rdev));
	atomic_inc(&engine->queued);
	atomic_inc(&engine->unfreed);
	INIT_WORK(&job->free_work, rbln_sched_free_job_work);
	kref_get(&job->ref);			/* the scheduler's, put by free_job */
	drm_sched_entity_push_job(&job->base);
}

struct drm_sched_entity *rbln_client_entity(struct rbln_client *client,
					    struct rbln_engine *engine)
{
	struct drm_sched_entity **slot = &client->entities[engine->chiplet->index][engine->kind];
	struct rbln_device *rdev = engine->chiplet->rdev;
	struct drm_gpu_scheduler *list[] = { &engine->sched };
	struct drm_sched_entity *entity;
	int ret;

	/* SUBMIT is inside drm_dev_enter(): removal cannot be destroying entities. */
	lockdep_assert_held(&client->lock);
	if (*slot)
		return *slot;
	entity = kzalloc(sizeof(*entity), GFP_KERNEL_ACCOUNT);
	if (!entity)
		return ERR_PTR(-ENOMEM);
	ret = drm_sched_entity_init(entity, DRM_SCHED_PRIORITY_NORMAL, list, 1, NULL);
	if (ret) {
		kfree(entity);
		return ERR_PTR(ret);
	}
	mutex_lock(&rdev->entities_lock);
	if (list_empty(&client->entities_link))
		list_add_tail(&client->entities_link, &rdev->entity_clients);
	*slot = entity;
	mutex_unlock(&rdev->entities_lock);
	return entity;
}

/* Queued jobs run (or end, if the device is going) first; entities_lock held. */
static void rbln_client_entities_destroy(struct rbln_client *client)
{
	unsigned int i, kind;

	lockdep_assert_held(&client->rdev->entities_lock);
	for (i = 0; i < RBLN_MAX_CHIPLETS; i++) {
		for (kind = 0; kind < DRM_RBLN_ENGINE_COUNT; kind++) {
			struct drm_sched_entity *entity = client->entities[i][kind];

			if (!entity)
				continue;
			drm_sched_entity_destroy(entity);
			/*
			 * 6.1's scheduler thread signals entity_idle after run_job,
			 * which may be after the destroy saw the queue empty.
			 */
			wait_for_completion(&entity->entity_idle);
			kfree(entity);
			WRITE_ONCE(client->entities[i][kind], NULL);	/* tests poll it */
		}
	}
	list_del_init(&client->entities_link);
}

void rbln_client_entities_fini(struct rbln_client *client)
{
	struct rbln_device *rdev = client->rdev;

	mutex_lock(&rdev->entities_lock);
	rbln_client_entities_destroy(client);
	mutex_unlock(&rdev->entities_lock);
}

static int rbln_engine_sched_init(struct rbln_engine *engine)
{
	struct rbln_device *rdev = engine->chiplet->rdev;
	const struct drm_sched_init_args args = {
		.ops = &rbln_sched_ops,
		RBLN_SCHED_INIT_NUM_RQS
		.credit_limit = 1,
		.timeout = rbln_sched_timeout(rdev),
		.name = rbln_engine_name(engine->kind),
		.dev = rdev->drm.dev,
	};
	int ret;

	ret = drm_sched_init(&engine->sched, &args);
	if (ret)
		return ret;
	engine->sched_ready = true;
	return 0;
}

int rbln_engines_init(struct rbln_device *rdev)
{
	unsigned int i, kind;
	int ret;

	init_waitqueue_head(&rdev->sched_idle);
	mutex_init(&rdev->entities_lock);
	INIT_LIST_HEAD(&rdev->entity_clients);
	for (i = 0; i < rdev->nr_chiplets; i++) {
		for (kind = 0; kind < DRM_RBLN_ENGINE_COUNT; kind++) {
			struct rbln_engine *engine = &rdev->chiplets[i].engines[kind];

			engine->chiplet = &rdev->chiplets[i];
			mutex_init(&engine->submit_lock);
			spin_lock_init(&engine->active_lock);
			engine->active = NULL;
			atomic_set(&engine->queued, 0);
			atomic_set(&engine->waiting, 0);
			atomic_set(&engine->unfreed, 0);
			atomic_set(&engine->resets, 0);
			atomic64_set(&engine->busy_ns, 0);
			engine->fence_context = dma_fence_context_alloc(1);
			atomic64_set(&engine->fence_seqno, 0);
			if (!engine->present)
				continue;
			ret = rbln_engine_sched_init(engine);
			if (ret) {
				rbln_engines_fini(rdev);
				return ret;
			}
		}
	}
	return 0;
}

/* After drm_dev_unplug() and with rdev->dying set: the hardware lets go of its jobs. */
void rbln_engines_stop(struct rbln_device *rdev)
{
	unsigned int i, kind;

	for (i = 0; i < rdev->nr_chiplets; i++) {
		for (kind = 0; kind < DRM_RBLN_ENGINE_COUNT; kind++) {
			struct rbln_engine *engine = &rdev->chiplets[i].engines[kind];
			struct rbln_job *job;

			if (!engine->sched_ready)
				continue;
			spin_lock(&engine->active_lock);
			job = engine->active;
			engine->active = NULL;
			if (job)
				kref_get(&job->ref);	/* its end may be reported meanwhile */
			spin_unlock(&engine->active_lock);
			if (!job)
				continue;
			/* Going anyway: a failed reset only says so. */
			if (rbln_hw_engine_reset(rdev, i, kind))
				drm_warn(&rdev->drm, "chiplet %u %s: engine reset failed at removal\n",
					 i, rbln_engine_name(kind));
			if (rbln_job_claim_end(job))
				rbln_job_end(job, -ENODEV);
			rbln_job_put(job);
		}
	}
}

/*
 * Queued jobs end with -ENODEV (run_job sees the device dying), then the
 * schedulers go; the entities of files still open go before them.
 */
void rbln_engines_fini(struct rbln_device *rdev)
{
	struct rbln_client *client, *next;
	unsigned int i, kind;

	mutex_lock(&rdev->entities_lock);
	list_for_each_entry_safe(client, next, &rdev->entity_clients, entities_link)
		rbln_client_entities_destroy(client);
	mutex_unlock(&rdev->entities_lock);
	for (i = 0; i < rdev->nr_chiplets; i++) {
		for (kind = 0; kind < DRM_RBLN_ENGINE_COUNT; kind++) {
			struct rbln_engine *engine = &rdev->chiplets[i].engines[kind];

			if (!engine->sched_ready)
				continue;
			/* free_job of every job has run: nothing is left pending. */
			wait_event(rdev->sched_idle, !atomic_read(&engine->unfreed));
			drm_sched_fini(&engine->sched);
			engine->sched_ready = false;
		}
	}
}
