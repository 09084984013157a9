// SPDX-License-Identifier: GPL-2.0-only
/*
 * DMA jobs.  A job is a list of copies run by one engine of one chiplet.
 * Each engine has an ordered workqueue, so jobs on an engine run one after
 * the other and engines run in parallel.  Everything a job needs is checked,
 * referenced and placed at submit time, in the caller's context (so lazy
 * buffers are charged to its memory cgroup); the worker only copies bytes.
 *
 * A file's jobs are numbered 1, 2, ...; WAIT looks a number up.  Jobs that
 * succeed are forgotten as they finish (waiting on them later returns at once
 * with status 0); failed ones stay until waited on, so the error is seen.
 * Both count against the file's DRM_RBLN_MAX_INFLIGHT.
 *
 * A revocation or a close drains the file's jobs before its buffers go: it
 * sets client->closing under client->lock, which SUBMIT holds while it runs a
 * job directly, then waits for the queued ones.
 *
 * Direct submission: a small job for an idle engine runs in the SUBMIT ioctl
 * itself, saving the hand-off to a worker and the wake-up of the waiter.
 */
#include <linux/moduleparam.h>
#include <linux/overflow.h>
#include <linux/sched.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/workqueue.h>
#include <drm/drm_drv.h>
#include <drm/drm_file.h>
#include <drm/drm_gem.h>
#include <drm/drm_print.h>

#include "rbln_compat.h"
#include "rbln_device.h"
#include "rbln_events.h"
#include "rbln_gem.h"
#include "rbln_job.h"

#define CREATE_TRACE_POINTS
#include "rbln_trace.h"

/* Jobs up to this many bytes may run directly in SUBMIT when the engine is idle. */
#define RBLN_DIRECT_MAX_BYTES	SZ_64K

static unsigned int job_timeout_ms = 1000;
module_param(job_timeout_ms, uint, 0644);
MODULE_PARM_DESC(job_timeout_ms,
	"A job on a hung engine is cancelled and the engine reset after this long (ms)");

struct rbln_job {
	struct kref ref;
	struct work_struct work;
	struct rbln_client *client;
	struct rbln_engine *engine;
	u64 seqno;
	u32 count;
	struct drm_rbln_copy *copies;
	struct rbln_bo **bos;		/* src and dst of each copy, referenced */
	u64 bytes;			/* sum of the copies' sizes */
	char label[DRM_RBLN_LABEL_MAX];
	struct completion done;
	int status;
};

/* Buffers go back as soon as a job is done, before anyone is told. */
static void rbln_job_drop_buffers(struct rbln_job *job)
{
	u32 i;

	for (i = 0; i < 2 * job->count; i++) {
		if (job->bos[i])
			drm_gem_object_put(&job->bos[i]->base);
		job->bos[i] = NULL;
	}
}

static void rbln_job_release(struct kref *ref)
{
	struct rbln_job *job = container_of(ref, struct rbln_job, ref);

	if (job->bos)
		rbln_job_drop_buffers(job);
	kvfree(job->bos);
	kvfree(job->copies);
	rbln_client_put(job->client);
	kfree(job);
}

static void rbln_job_put(struct rbln_job *job)
{
	kref_put(&job->ref, rbln_job_release);
}

/* Puts @job in the file's table for WAIT, with a reference of its own. */
static int rbln_job_remember(struct rbln_client *client, struct rbln_job *job)
{
	int ret;

	kref_get(&job->ref);
	ret = xa_err(xa_store(&client->jobs, job->seqno, job, GFP_KERNEL));
	if (ret)
		rbln_job_put(job);
	else
		atomic_inc(&client->tracked);
	return ret;
}

/*
 * Takes @job out of the table if it is still there: whoever takes it puts it.
 * Under client->lock, as WAIT's lookup and kref_get are: otherwise the last
 * reference could go in between (refcount_t "addition on 0", seen with
 * threads submitting and waiting on one file).
 */
static void rbln_job_forget(struct rbln_client *client, u64 seqno, struct rbln_job *job)
{
	bool taken;

	mutex_lock(&client->lock);
	taken = xa_cmpxchg(&client->jobs, seqno, job, NULL, GFP_KERNEL) == job;
	if (taken)
		atomic_dec(&client->tracked);
	mutex_unlock(&client->lock);
	if (taken)
		rbln_job_put(job);
}

/* A hung engine holds the job until the timeout, then is reset. */
static int rbln_job_wait_engine(struct rbln_job *job)
{
	struct rbln_engine *engine = job->engine;
	struct rbln_device *rdev = engine->chiplet->rdev;
	long left;

	if (!READ_ONCE(engine->hung))
		return 0;
	left = wait_event_timeout(engine->wait,
				  !READ_ONCE(engine->hung) || READ_ONCE(rdev->dying),
				  msecs_to_jiffies(job_timeout_ms));
	if (READ_ONCE(rdev->dying))
		return -ENODEV;
	if (left)
		return 0;
	WRITE_ONCE(engine->hung, false);
	atomic_inc(&engine->resets);
	rbln_event_send(&(struct rbln_event){
		.type = RBLN_GENL_EVENT_JOB_TIMEOUT, .device = rdev->info.index,
		.has = RBLN_EV_CHIPLET | RBLN_EV_ENGINE | RBLN_EV_CLIENT,
		.chiplet = engine->chiplet->index, .engine = engine->kind,
		.client = job->client->id, .pid = pid_nr(job->client->creator),
	});
	drm_info(&rdev->drm, "chiplet %u %s: job %llu timed out after %u ms, engine reset\n",
		 engine->chiplet->index, rbln_engine_name(engine->kind), job->seqno,
		 job_timeout_ms);
	return -ETIMEDOUT;
}

static int rbln_job_copy(struct rbln_job *job)
{
	u32 i;

	for (i = 0; i < job->count; i++) {
		const struct drm_rbln_copy *c = &job->copies[i];
		struct rbln_bo *src = job->bos[2 * i], *dst = job->bos[2 * i + 1];

		/*
		 * Placed at submit; a revocation drains the file's jobs before
		 * it frees backing, and exported buffers are never revoked.
		 */
		if (WARN_ON_ONCE(!READ_ONCE(src->vaddr) || !READ_ONCE(dst->vaddr)))
			return -ENODEV;
		memcpy(dst->vaddr + c->dst_offset, src->vaddr + c->src_offset, c->size);
		cond_resched();
	}
	return 0;
}

static int rbln_job_execute(struct rbln_job *job)
{
	struct rbln_engine *engine = job->engine;
	struct rbln_device *rdev = engine->chiplet->rdev;
	int ret, idx;

	if (READ_ONCE(job->client->closing))
		return -ECANCELED;
	if (!drm_dev_enter(&rdev->drm, &idx))
		return -ENODEV;
	if (READ_ONCE(engine->chiplet->down)) {
		ret = -ENODEV;
	} else if (atomic_add_unless(&rdev->fail_next_jobs, -1, 0)) {
		ret = -EIO;
	} else {
		ret = rbln_job_wait_engine(job);
		if (!ret)
			ret = rbln_job_copy(job);
	}
	drm_dev_exit(idx);
	return ret;
}

static void rbln_job_trace(struct rbln_job *job,
			   void (*event)(u32, u32, u32, u64, u64, u64, const char *, int))
{
	const struct rbln_engine *engine = job->engine;

	event(engine->chiplet->rdev->info.index, engine->chiplet->index, engine->kind,
	      job->client->id, job->seqno, job->bytes, job->label, job->status);
}

/* Runs @job on its engine; the caller holds engine->run_lock. */
static void rbln_job_run(struct rbln_job *job)
{
	struct rbln_engine *engine = job->engine;
	struct rbln_device *rdev = engine->chiplet->rdev;
	u64 start = ktime_get_ns(), busy;

	lockdep_assert_held(&engine->run_lock);
	rbln_job_trace(job, trace_rbln_job_start);
	rbln_busy_begin(&rdev->busy);
	job->status = rbln_job_execute(job);
	rbln_busy_end(&rdev->busy);
	rbln_job_drop_buffers(job);
	rbln_job_trace(job, trace_rbln_job_complete);
	busy = ktime_get_ns() - start;
	atomic64_add(busy, &engine->busy_ns);
	atomic64_add(busy, &job->client->engine_busy_ns[engine->kind]);
}

/* Direct submission; false if the job has to be queued instead. */
static bool rbln_job_run_direct(struct rbln_job *job)
{
	struct rbln_engine *engine = job->engine;

	if (job->bytes > RBLN_DIRECT_MAX_BYTES || READ_ONCE(engine->hung) ||
	    atomic_read(&engine->queued) || !mutex_trylock(&engine->run_lock))
		return false;
	/* Queued jobs go first: the engine runs one job at a time, in order. */
	if (atomic_read(&engine->queued)) {
		mutex_unlock(&engine->run_lock);
		return false;
	}
	rbln_job_run(job);
	mutex_unlock(&engine->run_lock);
	return true;
}

static void rbln_job_work(struct work_struct *work)
{
	struct rbln_job *job = container_of(work, struct rbln_job, work);
	struct rbln_client *client = job->client;
	struct rbln_engine *engine = job->engine;

	mutex_lock(&engine->run_lock);
	rbln_job_run(job);
	mutex_unlock(&engine->run_lock);
	atomic_dec(&engine->queued);

	if (!job->status)
		rbln_job_forget(client, job->seqno, job);	/* succeeded: nobody needs to find it */
	complete_all(&job->done);
	if (atomic_dec_and_test(&client->inflight))
		wake_up_all(&client->idle);
	rbln_job_put(job);		/* the queue's reference; may free the client */
}

/* Which memory an engine may touch; see struct drm_rbln_copy in the UAPI. */
static bool rbln_copy_allowed(const struct rbln_engine *engine,
			      const struct rbln_bo *src, const struct rbln_bo *dst)
{
	u32 chiplet = engine->chiplet->index;

	switch (engine->kind) {
	case DRM_RBLN_ENGINE_EXTERNAL_HDMA:
		return (rbln_bo_is_host(src) && rbln_bo_on_chiplet(dst, chiplet)) ||
		       (rbln_bo_on_chiplet(src, chiplet) && rbln_bo_is_host(dst));
	case DRM_RBLN_ENGINE_TASK_DMA:
		return !rbln_bo_is_host(src) && !rbln_bo_is_host(dst) &&
		       (rbln_bo_on_chiplet(src, chiplet) || rbln_bo_on_chiplet(dst, chiplet));
	case DRM_RBLN_ENGINE_NEURAL_DMA:
	case DRM_RBLN_ENGINE_DEVICE_HDMA:
		return rbln_bo_on_chiplet(src, chiplet) && rbln_bo_on_chiplet(dst, chiplet);
	default:
		return false;
	}
}

static bool rbln_range_ok(const struct rbln_bo *bo, u64 offset, u64 size)
{
	u64 end;

	return !check_add_overflow(offset, size, &end) && end <= bo->base.size;
}

static int rbln_job_check_copy(struct rbln_job *job, struct drm_file *file, u32 i)
{
	const struct drm_rbln_copy *c = &job->copies[i];
	struct drm_gem_object *src, *dst;
	struct rbln_bo *s, *d;

	if (!c->size)
		return -EINVAL;
	src = drm_gem_object_lookup(file, c->src_handle);
	if (!src)
		return -ENOENT;
	job->bos[2 * i] = to_rbln_bo(src);
	dst = drm_gem_object_lookup(file, c->dst_handle);
	if (!dst)
		return -ENOENT;
	job->bos[2 * i + 1] = to_rbln_bo(dst);
	s = to_rbln_bo(src);
	d = to_rbln_bo(dst);

	if (!rbln_range_ok(s, c->src_offset, c->size) || !rbln_range_ok(d, c->dst_offset, c->size))
		return -EINVAL;
	/* Overlapping ranges of one buffer would make the result order-dependent. */
	if (src == dst && c->src_offset < c->dst_offset + c->size &&
	    c->dst_offset < c->src_offset + c->size)
		return -EINVAL;
	if (!rbln_copy_allowed(job->engine, s, d))
		return -EINVAL;
	/* Lazy buffers get their backing now, charged to the submitter. */
	return rbln_bo_place(s) ?: rbln_bo_place(d);
}

static int rbln_job_read_copies(struct rbln_job *job, const struct drm_rbln_submit *args)
{
	const char __user *uptr = u64_to_user_ptr(args->copies);
	u32 i;
	int ret;

	for (i = 0; i < job->count; i++) {
		ret = copy_struct_from_user(&job->copies[i], sizeof(job->copies[i]),
					    uptr + (size_t)i * args->copy_size, args->copy_size);
		if (ret)
			return ret == -E2BIG ? -EINVAL : ret;	/* unknown trailing fields set */
	}
	return 0;
}

static int rbln_job_read_label(struct rbln_job *job, u64 label)
{
	long n;

	if (!label)
		return 0;
	n = strncpy_from_user(job->label, u64_to_user_ptr(label), sizeof(job->label));
	if (n < 0)
		return n;
	return n == sizeof(job->label) ? -EINVAL : 0;	/* no NUL within the limit */
}

static struct rbln_engine *rbln_submit_engine(struct rbln_device *rdev,
					      const struct drm_rbln_submit *args)
{
	struct rbln_engine *engine;

	if (args->chiplet >= rdev->nr_chiplets || args->engine >= DRM_RBLN_ENGINE_COUNT)
		return NULL;
	engine = &rdev->chiplets[args->chiplet].engines[args->engine];
	return engine->present ? engine : NULL;
}

static struct rbln_job *rbln_job_build(struct rbln_client *client, struct drm_file *file,
				       struct rbln_engine *engine,
				       const struct drm_rbln_submit *args)
{
	struct rbln_job *job;
	u32 i;
	int ret;

	job = kzalloc(sizeof(*job), GFP_KERNEL);
	if (!job)
		return ERR_PTR(-ENOMEM);
	kref_init(&job->ref);
	INIT_WORK(&job->work, rbln_job_work);
	init_completion(&job->done);
	kref_get(&client->ref);
	job->client = client;
	job->engine = engine;
	job->count = args->copy_count;
	job->copies = kvcalloc(job->count, sizeof(*job->copies), GFP_KERNEL);
	job->bos = kvcalloc(2 * job->count, sizeof(*job->bos), GFP_KERNEL);
	ret = job->copies && job->bos ? 0 : -ENOMEM;
	if (!ret)
		ret = rbln_job_read_label(job, args->label);
	if (!ret)
		ret = rbln_job_read_copies(job, args);
	for (i = 0; !ret && i < job->count; i++) {
		ret = rbln_job_check_copy(job, file, i);
		job->bytes += job->copies[i].size;
	}
	if (ret) {
		rbln_job_put(job);
		return ERR_PTR(ret);
	}
	return job;
}

/* Runs @job now or queues it; client->lock held. */
static int rbln_job_launch(struct rbln_client *client, struct rbln_job *job)
{
	int ret;

	lockdep_assert_held(&client->lock);
	if (client->closing)
		return -ENODEV;			/* revoked meanwhile */
	if (atomic_read(&client->tracked) >= DRM_RBLN_MAX_INFLIGHT)
		return -EAGAIN;
	rbln_job_trace(job, trace_rbln_job_submit);
	if (rbln_job_run_direct(job)) {
		complete_all(&job->done);
		/* Done already; only a failure needs remembering for WAIT. */
		return job->status ? rbln_job_remember(client, job) : 0;
	}
	ret = rbln_job_remember(client, job);
	if (ret)
		return ret;
	atomic_inc(&client->inflight);
	atomic_inc(&job->engine->queued);
	kref_get(&job->ref);			/* the queue's */
	queue_work(job->engine->wq, &job->work);
	return 0;
}

int rbln_ioctl_submit(struct drm_device *drm, void *data, struct drm_file *file)
{
	struct rbln_device *rdev = to_rbln_device(drm);
	struct rbln_client *client = file->driver_priv;
	struct drm_rbln_submit *args = data;
	struct rbln_engine *engine;
	struct rbln_job *job;
	int ret, idx;

	if (args->flags || args->reserved || !args->copy_count ||
	    args->copy_count > DRM_RBLN_MAX_COPIES ||
	    args->copy_size < sizeof(struct drm_rbln_copy) || args->copy_size > PAGE_SIZE)
		return -EINVAL;
	if (atomic_read(&client->tracked) >= DRM_RBLN_MAX_INFLIGHT)
		return -EAGAIN;		/* early; checked again under the lock */
	engine = rbln_submit_engine(rdev, args);
	if (!engine)
		return -EINVAL;
	if (READ_ONCE(engine->chiplet->down))
		return -ENODEV;
	ret = rbln_client_check_owner(client);
	if (ret)
		return ret;

	job = rbln_job_build(client, file, engine, args);
	if (IS_ERR(job))
		return PTR_ERR(job);

	rbln_client_touch(client);
	/* Queue only while the device is alive: removal destroys the queues. */
	if (!drm_dev_enter(drm, &idx)) {
		rbln_job_put(job);
		return -ENODEV;
	}
	mutex_lock(&client->lock);
	job->seqno = client->last_seqno + 1;
	ret = rbln_job_launch(client, job);
	rbln_job_put(job);
	if (!ret) {
		client->last_seqno++;
		args->seqno = client->last_seqno;
	}
	mutex_unlock(&client->lock);
	drm_dev_exit(idx);
	return ret;
}

int rbln_ioctl_wait(struct drm_device *drm, void *data, struct drm_file *file)
{
	struct rbln_client *client = file->driver_priv;
	struct drm_rbln_wait *args = data;
	struct rbln_job *job;
	u64 deadline;
	long left;

	if (args->flags || !args->seqno || args->timeout_ns < 0)
		return -EINVAL;

	mutex_lock(&client->lock);
	if (args->seqno > client->last_seqno) {
		mutex_unlock(&client->lock);
		return -EINVAL;
	}
	job = xa_load(&client->jobs, args->seqno);
	if (job)
		kref_get(&job->ref);
	mutex_unlock(&client->lock);
	if (!job) {
		args->status = 0;	/* finished and succeeded, or already reported */
		return 0;
	}

	deadline = ktime_get_ns() + args->timeout_ns;
	left = wait_for_completion_interruptible_timeout(&job->done,
		min_t(u64, nsecs_to_jiffies64(args->timeout_ns), MAX_SCHEDULE_TIMEOUT));
	if (left < 0) {
		/* A restarted call waits only for what was left (as i915's GEM_WAIT). */
		args->timeout_ns = max_t(s64, 0, deadline - ktime_get_ns());
	} else if (left > 0) {
		args->status = job->status;
		rbln_job_forget(client, args->seqno, job);	/* a failure is reported once */
	}
	rbln_job_put(job);
	return left < 0 ? left : left ? 0 : -ETIME;
}

/*
 * The file is closing (the process exited or was killed) or its client is
 * being revoked: jobs not started yet are cancelled, the running ones finish
 * (a hung engine times out), and all have dropped their buffers after this.
 */
void rbln_client_drain_jobs(struct rbln_client *client)
{
	struct rbln_job *job;
	unsigned long seqno;

	/* SUBMIT checks this under the lock, and runs direct jobs holding it. */
	mutex_lock(&client->lock);
	WRITE_ONCE(client->closing, true);
	mutex_unlock(&client->lock);
	wait_event(client->idle, atomic_read(&client->inflight) == 0);
	/*
	 * Revoke and close may drain at once, and the victim may still WAIT:
	 * @job is not ours to read until rbln_job_forget() took it (by index).
	 */
	xa_for_each(&client->jobs, seqno, job)
		rbln_job_forget(client, seqno, job);
}

int rbln_engines_init(struct rbln_device *rdev)
{
	unsigned int i, kind;

	for (i = 0; i < rdev->nr_chiplets; i++) {
		for (kind = 0; kind < DRM_RBLN_ENGINE_COUNT; kind++) {
			struct rbln_engine *engine = &rdev->chiplets[i].engines[kind];

			engine->chiplet = &rdev->chiplets[i];
			init_waitqueue_head(&engine->wait);
			mutex_init(&engine->run_lock);
			atomic_set(&engine->queued, 0);
			atomic_set(&engine->resets, 0);
			atomic64_set(&engine->busy_ns, 0);
			if (!engine->present)
				continue;
			engine->wq = alloc_ordered_workqueue("rbln%u-c%u-%s", 0, rdev->info.index,
							     i, rbln_engine_name(kind));
			if (!engine->wq) {
				rbln_engines_fini(rdev);
				return -ENOMEM;
			}
		}
	}
	return 0;
}

void rbln_engines_kick(struct rbln_device *rdev)
{
	unsigned int i, kind;

	for (i = 0; i < rdev->nr_chiplets; i++)
		for (kind = 0; kind < DRM_RBLN_ENGINE_COUNT; kind++)
			wake_up_all(&rdev->chiplets[i].engines[kind].wait);
}

/* After drm_dev_unplug(): queued jobs finish with -ENODEV. */
void rbln_engines_fini(struct rbln_device *rdev)
{
	unsigned int i, kind;

	rbln_engines_kick(rdev);
	for (i = 0; i < rdev->nr_chiplets; i++) {
		for (kind = 0; kind < DRM_RBLN_ENGINE_COUNT; kind++) {
			struct rbln_engine *engine = &rdev->chiplets[i].engines[kind];

			if (engine->wq) {
				destroy_workqueue(engine->wq);
				engine->wq = NULL;
			}
		}
	}
}
