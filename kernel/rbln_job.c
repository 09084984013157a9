// SPDX-License-Identifier: GPL-2.0-only
/*
 * DMA jobs.  A job is a list of copies run by one engine of one chiplet.
 * Everything a job needs is checked, referenced and placed at submit time, in
 * the caller's context (so lazy buffers are charged to its memory cgroup);
 * the engine's scheduler (rbln_sched.c) runs it, in order, on the hardware.
 * Its end is a dma_fence, added to its buffers' reservation objects.
 *
 * A file's jobs are numbered 1, 2, ...; WAIT looks a number up.  Jobs that
 * succeed are forgotten as they finish (waiting on them later returns at once
 * with status 0); failed ones stay until waited on, so the error is seen.
 * Both count against the file's DRM_RBLN_MAX_INFLIGHT.
 *
 * A revocation or a close drains the file's jobs before its buffers go: it
 * sets client->closing under client->lock, which SUBMIT holds, then waits for
 * the jobs already handed over; those not started yet end with -ECANCELED.
 *
 * A scheduled job's end signals its fences first and does the rest (buffers
 * back, the file's table and in-flight count) in a work item: the path that
 * signals a fence must not take locks that others hold while they wait for
 * fences or allocate memory (see dma_fence_begin_signalling()).  WAIT and the
 * drain wait for that work too, so they see the buffers back.
 *
 * Direct submission: a job of at most RBLN_HW_RUN_NOW_MAX_BYTES for an idle
 * engine runs in the SUBMIT ioctl itself when the backend can do that
 * (engine_run_now), saving the hand-offs to the scheduler's and the engine's
 * workers and the wake-up of the waiter.  Meanwhile it holds the file's lock
 * and the engine's submit_lock: the file's other calls, and other files'
 * SUBMITs to that engine (which then queue behind it), wait for its copy,
 * which rbln_hw.h bounds.  Once one job is queued, or a SUBMIT waits to queue
 * one, jobs for that engine queue too until it is idle, so files take turns.
 * A direct job that has had its engine for a slice while such a SUBMIT waits
 * yields it part way (a submitter given little CPU would hold it long): its
 * rest is scheduled like any job, and from then on nothing but a fatal
 * signal or a failed allocation fails its SUBMIT (see rbln_job_schedule()).
 */
#include <linux/device.h>
#include <linux/dma-fence.h>
#include <linux/dma-mapping.h>
#include <linux/dma-resv.h>
#include <linux/overflow.h>
#include <linux/scatterlist.h>
#include <linux/sched.h>
#include <linux/sched/signal.h>
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
#include "rbln_gem.h"
#include "rbln_job.h"
#include "rbln_sync.h"
#include "rbln_test_point.h"
#include "rbln_times.h"

#define CREATE_TRACE_POINTS
#include "rbln_trace.h"

/* Side @i of the job's copies: the source is read, the destination written. */
static enum dma_data_direction rbln_job_buffer_dir(u32 i)
{
	return i & 1 ? DMA_FROM_DEVICE : DMA_TO_DEVICE;
}

/* The first @count sides' DMA mappings. */
static void rbln_job_dma_unmap(struct rbln_job *job, u32 count)
{
	u32 i;

	for (i = 0; i < count; i++)
		if (job->bufs[i].sgt)
			dma_unmap_sgtable(job->dma_dev, job->bufs[i].sgt, rbln_job_buffer_dir(i), 0);
}

/* Whatever rbln_job_hw_buffers() mapped, unmapped. */
static void rbln_job_dma_unmap_all(struct rbln_job *job)
{
	rbln_job_dma_unmap(job, job->dma_mapped);
	job->dma_mapped = 0;
}

/* The job's sg tables (and its DMA mappings, if rbln_job_end() has not taken them yet). */
static void rbln_job_unmap_buffers(struct rbln_job *job)
{
	u32 i;

	/* A job of a backend the CPU reaches has none (dma_dev comes with the first). */
	if (!job->dma_dev)
		return;
	rbln_job_dma_unmap_all(job);
	for (i = 0; job->bufs && i < 2 * job->hw.count; i++) {
		struct sg_table *sgt = job->bufs[i].sgt;

		if (!sgt)
			continue;
		sg_free_table(sgt);
		kfree(sgt);
		job->bufs[i].sgt = NULL;
	}
	put_device(job->dma_dev);
	job->dma_dev = NULL;
}

/*
 * The sg table of side @i of the job's copies, for a backend that moves
 * bytes by DMA (one with a dma_dev; the caller checks): only the copy's
 * bytes, not the whole buffer, or a job of many small copies of a big
 * buffer would pin an sg table of the whole buffer per copy (4096 copies of
 * a 1 GiB buffer: 64 GiB of scatterlists from one SUBMIT).  Built here,
 * where it may allocate and is charged to the submitter; mapped only when
 * the job goes to its engine (see rbln_job_hw_buffers).
 */
static int rbln_job_build_sg(struct rbln_job *job, u32 i)
{
	struct device *dev = job->engine->chiplet->rdev->info.dma_dev;
	const struct drm_rbln_copy *c = &job->copies[i / 2];
	struct rbln_bo *bo = job->bos[i];
	struct sg_table *sgt;

	/* An imported buffer's pages are its exporter's, not ours to map. */
	if (rbln_bo_is_imported(bo))
		return -EOPNOTSUPP;
	/* A reclaim may take the backing back meanwhile: it holds the lock to do so. */
	mutex_lock(&bo->lock);
	sgt = bo->vaddr ? rbln_bo_range_sg(bo, i & 1 ? c->dst_offset : c->src_offset, c->size,
					   dma_get_max_seg_size(dev)) :
			  ERR_PTR(-ENODEV);
	mutex_unlock(&bo->lock);
	if (IS_ERR(sgt))
		return PTR_ERR(sgt);
	if (!job->dma_dev)
		job->dma_dev = get_device(dev);
	job->bufs[i].sgt = sgt;
	return 0;
}

/* Buffers go back as soon as a job is done, before anyone is told. */
static void rbln_job_drop_buffers(struct rbln_job *job)
{
	u32 i;

	rbln_job_unmap_buffers(job);
	for (i = 0; i < 2 * job->hw.count; i++) {
		if (job->bos[i])
			drm_gem_object_put(&job->bos[i]->base);
		job->bos[i] = NULL;
	}
}

static struct workqueue_struct *rbln_job_wq;
/*
 * Drains a killed task left to others (rbln_client.c).  Not rbln_job_wq: a
 * drain waits for jobs' end work, which must not queue behind drains.
 */
static struct workqueue_struct *rbln_drain_wq;

int rbln_jobs_init(void)
{
	rbln_job_wq = alloc_workqueue("rbln-jobs", WQ_UNBOUND, 0);
	if (!rbln_job_wq)
		return -ENOMEM;
	rbln_drain_wq = alloc_workqueue("rbln-drain", WQ_UNBOUND, 0);
	if (!rbln_drain_wq) {
		destroy_workqueue(rbln_job_wq);
		return -ENOMEM;
	}
	return 0;
}

void rbln_jobs_queue_drain(struct work_struct *work)
{
	queue_work(rbln_drain_wq, work);
}

/* The module's deferred work that must finish before it goes (fences' pins, a wedge's announcement). */
void rbln_jobs_queue_work(struct work_struct *work)
{
	queue_work(rbln_job_wq, work);
}

/* Every device is gone: the last job puts and ends run before the module goes. */
void rbln_jobs_fini(void)
{
	destroy_workqueue(rbln_drain_wq);	/* first: drains wait for the jobs' work */
	destroy_workqueue(rbln_job_wq);
}

static void rbln_job_release(struct kref *ref)
{
	struct rbln_job *job = container_of(ref, struct rbln_job, ref);
	struct drm_device *drm = &job->engine->chiplet->rdev->drm;
	u32 i;

	if (job->bos)
		rbln_job_drop_buffers(job);
	for (i = 0; i < job->nr_deps; i++)
		dma_fence_put(job->deps[i]);
	kfree(job->deps);
	kfree(job->trace_waits);
	dma_fence_put(job->hw_fence);
	dma_fence_put(job->done);
	rbln_fence_free_unstarted(job->spare_fence);
	if (job->bos != job->bos_inline)
		kvfree(job->bos);
	if (job->bufs != job->bufs_inline)
		kvfree(job->bufs);
	if (job->copies != &job->copy_inline)
		kvfree(job->copies);
	rbln_client_put(job->client);
	kfree(job);
	drm_dev_put(drm);		/* the device outlives its jobs */
}

void rbln_job_put(struct rbln_job *job)
{
	kref_put(&job->ref, rbln_job_release);
}

/* Puts @job in the file's table for WAIT, with a reference of its own. */
static int rbln_job_remember(struct rbln_client *client, struct rbln_job *job)
{
	int ret;

	kref_get(&job->ref);
	ret = xa_err(xa_store(&client->jobs, job->seqno, job, GFP_KERNEL_ACCOUNT));
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
static bool rbln_job_take_locked(struct rbln_client *client, u64 seqno, struct rbln_job *job)
{
	lockdep_assert_held(&client->lock);
	if (xa_cmpxchg(&client->jobs, seqno, job, NULL, GFP_KERNEL) != job)
		return false;
	atomic_dec(&client->tracked);
	return true;
}

static void rbln_job_forget(struct rbln_client *client, u64 seqno, struct rbln_job *job)
{
	bool taken;

	mutex_lock(&client->lock);
	taken = rbln_job_take_locked(client, seqno, job);
	mutex_unlock(&client->lock);
	if (taken)
		rbln_job_put(job);
}

static void rbln_job_trace_event(struct rbln_job *job,
				 void (*event)(u32, u32, u32, u64, u64, u64, const char *, int,
					       pid_t, const char *))
{
	const struct rbln_engine *engine = job->engine;

	event(engine->chiplet->rdev->info.index, engine->chiplet->index, engine->kind,
	      job->client->id, job->seqno, job->hw.bytes, job->label, job->status,
	      pid_nr(job->client->creator), job->client->creator_comm);
}

/*
 * The static key first: while the event is off, a job pays one patched-out
 * branch, not the gathering of its arguments and an indirect call.
 */
#define rbln_job_trace(job, name)					\
	do {								\
		if (trace_##name##_enabled())				\
			rbln_job_trace_event((job), trace_##name);	\
	} while (0)

/* A submitted job's syncobjs, for a profiler's arrows (client->lock held: seqno is its own). */
static void rbln_job_trace_syncs(struct rbln_job *job, const struct rbln_out_sync *out)
{
	u32 device = job->engine->chiplet->rdev->info.index, i;

	for (i = 0; i < job->nr_trace_waits; i++)
		trace_rbln_job_wait(device, job->client->id, job->seqno,
				    job->trace_waits[i].sync, job->trace_waits[i].point);
	/* The key's hash only while the event is on. */
	if (out->syncobj && trace_rbln_job_signal_enabled())
		trace_rbln_job_signal(device, job->client->id, job->seqno,
				      rbln_sync_trace_key(out->syncobj), out->point);
}

void rbln_job_begin(struct rbln_job *job)
{
	job->started = true;
	job->start_ns = rbln_busy_begin(&job->engine->chiplet->rdev->busy);
	rbln_job_trace(job, rbln_job_start);
}

/* SUBMIT_TIMES: the job may wait from here on, so its submit time is now. */
static void rbln_job_note_submit(struct rbln_job *job)
{
	if (job->want_times && !job->submit_ns)
		job->submit_ns = ktime_get_ns();
}

bool rbln_job_claim_end(struct rbln_job *job)
{
	return !test_and_set_bit(0, &job->ended);
}

/* The job stops running (ended, or a direct job turned back): its busy time counts. */
static u64 rbln_job_account_busy(struct rbln_job *job)
{
	struct rbln_engine *engine = job->engine;
	u64 now = rbln_busy_end(&engine->chiplet->rdev->busy);
	u64 busy = now - job->start_ns;

	atomic64_add(busy, &engine->busy_ns);
	atomic64_add(busy, &job->client->engine_busy_ns[engine->kind]);
	return now;
}

/* Status and busy time; the caller tells whoever waits. */
static void rbln_job_account_end(struct rbln_job *job, int status)
{
	job->status = status;
	if (!job->started) {
		if (job->want_times)
			job->end_ns = ktime_get_ns();
		/* Ended without running (a failed input): a profiler still sees its end. */
		rbln_job_trace(job, rbln_job_complete);
		return;
	}
	job->end_ns = rbln_job_account_busy(job);
	rbln_job_trace(job, rbln_job_complete);
}

/* The part of a scheduled job's end that takes locks and frees. */
static void rbln_job_end_work(struct work_struct *work)
{
	struct rbln_job *job = container_of(work, struct rbln_job, end_work);
	struct rbln_client *client = job->client;

	rbln_test_point(RBLN_TP_JOB_END_WORK);
	if (job->timed_out)
		rbln_job_timeout_report(job);
	rbln_job_drop_buffers(job);
	/* Before WAIT can return for it: then its record is there. */
	if (job->want_times)
		rbln_times_record(job);
	if (!job->status)
		rbln_job_forget(client, job->seqno, job);	/* succeeded: nobody needs to find it */
	if (atomic_dec_and_test(&client->inflight))
		wake_up_all(&client->idle);
	complete_all(&job->end_done);
	rbln_job_put(job);
}

/* A scheduled job ended: from the backend, the timeout handler, run_job or removal. */
void rbln_job_end(struct rbln_job *job, int status)
{
	bool cookie = dma_fence_begin_signalling();

	rbln_job_account_end(job, status);
	/*
	 * Unmapped before anyone is told, as the direct path does: unmapping
	 * is what hands the device's writes to the CPU (a bounce buffer copied
	 * back, caches invalidated).  Later, a dependant or a syncobj waiter
	 * would read the old bytes, and the copy back would overwrite what
	 * they wrote since.  The DMA API unmaps without allocating or sleeping.
	 */
	rbln_job_dma_unmap_all(job);
	/* Set before the hardware fence signals: older schedulers do not pass its error on. */
	if (status && job->scheduled)
		dma_fence_set_error(&job->base.s_fence->finished, status);
	atomic_dec(&job->engine->queued);
	/* Queued before the signal, so whoever saw the fence signalled can flush it. */
	kref_get(&job->ref);
	queue_work(rbln_job_wq, &job->end_work);
	if (job->hw_fence) {
		if (status)
			dma_fence_set_error(job->hw_fence, status);
		/*
		 * Stamped with the engine's end, not the moment of the signal: on
		 * a loaded CPU the signal can come after the next job started.
		 */
		if (job->started)
			dma_fence_signal_timestamp(job->hw_fence, ns_to_ktime(job->end_ns));
		else
			dma_fence_signal(job->hw_fence);
	}
	dma_fence_end_signalling(cookie);
}

void rbln_job_flush_end(struct rbln_job *job)
{
	/*
	 * Still queued: done here, so the waiter need not wait for a worker to
	 * run it.  Otherwise a worker or another WAIT runs it, or, when removal
	 * kills a queued job, it is queued only after the fence signalled.
	 */
	if (cancel_work(&job->end_work))
		rbln_job_end_work(&job->end_work);
	rbln_test_point(RBLN_TP_WAIT_ENDING);
	wait_for_completion(&job->end_done);
}

/*
 * Right before the job goes to its engine: the buffers' CPU addresses, and
 * for a DMA backend the mappings of their sg tables.  Mapped only now, not
 * at SUBMIT, so that a device's DMA window (edu reaches 28 bits: 256 MiB of
 * IOVAs) holds the jobs on its engines and never the queued ones: no file's
 * queue can use it up for the others.  The DMA API maps without sleeping
 * (here in run_job's fence-signalling section), and the mapping syncs the
 * bytes the jobs this one waited for wrote.  Unmapped once the job ended.
 */
int rbln_job_hw_buffers(struct rbln_job *job)
{
	u32 i;
	int ret;

	for (i = 0; i < 2 * job->hw.count; i++) {
		void *cpu = smp_load_acquire(&job->bos[i]->vaddr);	/* see rbln_bo_place() */

		/* Placed at submit; only a reclaim takes the backing back. */
		if (!cpu)
			return -ENODEV;
		job->bufs[i].cpu = cpu;
	}
	for (i = 0; i < 2 * job->hw.count; i++) {
		if (!job->bufs[i].sgt)
			continue;
		ret = dma_map_sgtable(job->dma_dev, job->bufs[i].sgt, rbln_job_buffer_dir(i),
				      DMA_ATTR_NO_WARN);
		if (ret) {
			rbln_job_dma_unmap(job, i);
			return ret;
		}
	}
	if (job->dma_dev)
		job->dma_mapped = 2 * job->hw.count;
	return 0;
}

/* Jobs queued for @engine, or about to be: a direct job would go before them. */
static bool rbln_engine_has_waiters(struct rbln_engine *engine)
{
	return atomic_read(&engine->queued) || atomic_read(&engine->waiting);
}

/*
 * A direct job gives its engine up once it has had it a slice while another
 * file's SUBMIT waits to queue a job for it.
 */
bool rbln_hw_job_should_yield(const struct rbln_hw_job *hw)
{
	const struct rbln_job *job = container_of(hw, struct rbln_job, hw);

	/* A test's hook stands for the slice having run out (and counts the calls). */
	if (!rbln_test_point(RBLN_TP_DIRECT_SLICE) && time_before(jiffies, job->yield_at))
		return false;
	return rbln_engine_has_waiters(job->engine);
}

/*
 * A task that asked for less of the CPU than others (nice above 0,
 * SCHED_BATCH or SCHED_IDLE) would hold the engine, and the locks others wait
 * for, longer than a big direct job takes at full speed.  Real-time tasks
 * keep the direct path whatever their (unused) nice value.
 */
static bool rbln_task_has_full_share(void)
{
	unsigned int policy = READ_ONCE(current->policy);

	if (policy == SCHED_FIFO || policy == SCHED_RR || policy == SCHED_DEADLINE)
		return true;
	return task_nice(current) <= 0 && policy != SCHED_BATCH && policy != SCHED_IDLE;
}

/* Direct submission; false if the job has to be scheduled instead. */
static bool rbln_job_run_direct(struct rbln_job *job)
{
	struct rbln_engine *engine = job->engine;
	struct rbln_device *rdev = engine->chiplet->rdev;
	int status;

	/* Once every input has ended: a failed one fails it right here. */
	if (!rbln_hw_can_run_now(rdev) || !rbln_job_deps_signalled(job) ||
	    job->hw.bytes > RBLN_HW_RUN_NOW_MAX_BYTES ||
	    (job->hw.bytes > RBLN_HW_RUN_NOW_ANY_TASK_BYTES && !rbln_task_has_full_share()) ||
	    rbln_engine_has_waiters(engine) || !mutex_trylock(&engine->submit_lock))
		return false;
	/* Scheduled jobs go first: the engine runs one job at a time, in order. */
	if (rbln_engine_has_waiters(engine)) {
		mutex_unlock(&engine->submit_lock);
		return false;
	}
	/* Its slice runs from when it has the engine. */
	job->yield_at = jiffies + msecs_to_jiffies(RBLN_HW_RUN_NOW_SLICE_MS);
	status = rbln_job_precheck(job) ?: rbln_job_hw_buffers(job);
	if (!status) {
		rbln_job_begin(job);
		/* It waited for nothing in SUBMIT: submitted as it started. */
		if (job->want_times && !job->submit_ns)
			job->submit_ns = job->start_ns;
		status = rbln_hw_engine_run_now(rdev, &job->hw);
		if (status == -EAGAIN || status == -EINPROGRESS) {
			/*
			 * Not now after all (nothing ran), or it yielded its
			 * engine part way (job->hw.resume): the scheduler runs
			 * it, or its rest, in turn, and run_job maps again.
			 */
			if (status == -EINPROGRESS) {
				job->ran_part = true;
				rbln_job_account_busy(job);
			} else {
				rbln_busy_end(&rdev->busy);
			}
			job->started = false;
			rbln_job_dma_unmap_all(job);
			mutex_unlock(&engine->submit_lock);
			return false;
		}
	}
	test_and_set_bit(0, &job->ended);
	rbln_job_account_end(job, status);
	mutex_unlock(&engine->submit_lock);
	/*
	 * Not under submit_lock: the last reference to an imported buffer takes
	 * its dma-buf's reservation lock, which SUBMIT holds around submit_lock.
	 */
	rbln_job_drop_buffers(job);
	/*
	 * A failure's fence, for WAIT and out_sync: signalled with the error
	 * (NULL if it could not be made: SUBMIT fails then, as a success fence
	 * would let dependent jobs run on bad input).  A success needs none, and
	 * is not kept for WAIT.
	 */
	if (status) {
		complete_all(&job->end_done);	/* no end work: WAIT returns at once */
		job->done = rbln_fence_create_failed(status);
	}
	return true;
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
	int ret;

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
	ret = rbln_bo_place(s) ?: rbln_bo_place(d);
	if (ret || !job->engine->chiplet->rdev->info.dma_dev)
		return ret;		/* the CPU reaches them: no sg tables */
	return rbln_job_build_sg(job, 2 * i) ?: rbln_job_build_sg(job, 2 * i + 1);
}

static int rbln_job_read_copies(struct rbln_job *job, const struct drm_rbln_submit *args)
{
	const char __user *uptr = u64_to_user_ptr(args->copies);
	u32 i;
	int ret;

	for (i = 0; i < job->hw.count; i++) {
		const char __user *u = uptr + (size_t)i * args->copy_size;

		/* The common case, with a constant size: no object-size check per copy. */
		if (args->copy_size == sizeof(job->copies[i])) {
			if (copy_from_user(&job->copies[i], u, sizeof(job->copies[i])))
				return -EFAULT;
			continue;
		}
		ret = copy_struct_from_user(&job->copies[i], sizeof(job->copies[i]),
					    u, args->copy_size);
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

	/* Charged to the submitter: a file's jobs are bounded, their memory counted. */
	job = kzalloc(sizeof(*job), GFP_KERNEL_ACCOUNT);
	if (!job)
		return ERR_PTR(-ENOMEM);
	kref_init(&job->ref);
	INIT_WORK(&job->end_work, rbln_job_end_work);
	init_completion(&job->end_done);
	drm_dev_get(&engine->chiplet->rdev->drm);
	kref_get(&client->ref);
	job->client = client;
	job->engine = engine;
	job->status = -ECANCELED;		/* until it ends otherwise */
	job->hw.chiplet = engine->chiplet->index;
	job->hw.engine = engine->kind;
	job->hw.count = args->copy_count;
	if (job->hw.count == 1) {
		job->copies = &job->copy_inline;
		job->bos = job->bos_inline;
		job->bufs = job->bufs_inline;
	} else {
		job->copies = kvcalloc(job->hw.count, sizeof(*job->copies), GFP_KERNEL_ACCOUNT);
		job->bos = kvcalloc(2 * job->hw.count, sizeof(*job->bos), GFP_KERNEL_ACCOUNT);
		job->bufs = kvcalloc(2 * job->hw.count, sizeof(*job->bufs), GFP_KERNEL_ACCOUNT);
	}
	job->hw.copies = job->copies;
	job->hw.bufs = job->bufs;
	ret = job->copies && job->bos && job->bufs ? 0 : -ENOMEM;
	if (!ret)
		ret = rbln_job_read_label(job, args->label);
	if (!ret)
		ret = rbln_job_read_copies(job, args);
	/* The limit first: a refused job has looked up and placed nothing. */
	for (i = 0; !ret && i < job->hw.count; i++)
		if (check_add_overflow(job->hw.bytes, job->copies[i].size, &job->hw.bytes) ||
		    job->hw.bytes > engine->chiplet->rdev->info.job_max_bytes)
			ret = -EINVAL;
	for (i = 0; !ret && i < job->hw.count; i++)
		ret = rbln_job_check_copy(job, file, i);
	/* What the backend cannot end within its timeout is refused here, not timed out later. */
	if (!ret)
		ret = rbln_hw_engine_check(engine->chiplet->rdev, &job->hw);
	if (ret) {
		rbln_job_put(job);
		return ERR_PTR(ret);
	}
	return job;
}

/* The distinct buffers of @job, for their reservation objects; kvfree() it. */
static struct drm_gem_object **rbln_job_objects(struct rbln_job *job, int *count)
{
	struct drm_gem_object **objs;
	u32 i, j;
	int n = 0;

	objs = kvmalloc_array(2 * job->hw.count, sizeof(*objs), GFP_KERNEL_ACCOUNT);
	if (!objs)
		return NULL;
	for (i = 0; i < 2 * job->hw.count; i++) {
		struct drm_gem_object *obj = &job->bos[i]->base;

		for (j = 0; j < n && objs[j] != obj; j++)
			;
		if (j == n)
			objs[n++] = obj;
	}
	*count = n;
	return objs;
}

/* Whether @obj is written by one of @job's copies. */
static bool rbln_job_writes(const struct rbln_job *job, const struct drm_gem_object *obj)
{
	u32 i;

	for (i = 0; i < job->hw.count; i++)
		if (&job->bos[2 * i + 1]->base == obj)
			return true;
	return false;
}

/*
 * drm_gem_lock_reservations() that no signal interrupts, for a job that ran
 * in part inside SUBMIT: failing its SUBMIT then would leave part of its
 * copies done, and a SUBMIT restarted after a signal would redo them (a job
 * may read what it wrote).  The holders are SUBMITs on their way to their
 * engines' submit_lock and short CPU paths.
 */
static int rbln_lock_reservations_uninterruptible(struct drm_gem_object **objs, int count,
						  struct ww_acquire_ctx *ctx)
{
	int contended = -1, i, j, ret;

	ww_acquire_init(ctx, &reservation_ww_class);
retry:
	if (contended != -1)
		dma_resv_lock_slow(objs[contended]->resv, ctx);
	for (i = 0; i < count; i++) {
		if (i == contended)
			continue;
		ret = dma_resv_lock(objs[i]->resv, ctx);
		if (!ret)
			continue;
		/* Back off: all held so far, the one taken slowly too. */
		for (j = 0; j < i; j++)
			dma_resv_unlock(objs[j]->resv);
		if (contended > i)
			dma_resv_unlock(objs[contended]->resv);
		if (ret == -EDEADLK) {
			contended = i;
			goto retry;
		}
		ww_acquire_fini(ctx);
		return ret;
	}
	ww_acquire_done(ctx);
	return 0;
}

/*
 * Hands @job to its engine's scheduler, its end fence added to its buffers'
 * reservation objects (written ones as writes, read ones as reads), so freeing,
 * faults and importers see them busy.  client->lock held.  For a job that ran
 * in part (its rest), only a fatal signal or a failed allocation fails this.
 */
static int rbln_job_schedule(struct rbln_job *job)
{
	struct rbln_engine *engine = job->engine;
	struct drm_sched_entity *entity;
	struct drm_gem_object **objs;
	struct ww_acquire_ctx ctx;
	int ret, n = 0, i;

	entity = rbln_client_entity(job->client, engine);
	if (IS_ERR(entity))
		return PTR_ERR(entity);
	job->spare_fence = rbln_fence_alloc();
	if (!job->spare_fence)
		return -ENOMEM;
	ret = rbln_sched_job_init(&job->base, entity, job->client, job->client->id);
	if (ret)
		return ret;
	job->scheduled = true;
	for (i = 0; i < job->nr_deps; i++) {
		ret = drm_sched_job_add_dependency(&job->base, dma_fence_get(job->deps[i]));
		if (ret)
			goto err_cleanup;
	}
	objs = rbln_job_objects(job, &n);
	if (!objs) {
		ret = -ENOMEM;
		goto err_cleanup;
	}
	ret = job->ran_part ? rbln_lock_reservations_uninterruptible(objs, n, &ctx) :
			      drm_gem_lock_reservations(objs, n, &ctx);
	if (ret)
		goto err_free;
	for (i = 0; i < n && !ret; i++)
		ret = dma_resv_reserve_fences(objs[i]->resv, 1);
	if (ret)
		goto err_unlock;

	/* Another file's direct job may hold it for its copy: a kill need not wait. */
	ret = mutex_lock_killable(&engine->submit_lock);
	if (ret)
		goto err_unlock;
	drm_sched_job_arm(&job->base);
	job->done = dma_fence_get(&job->base.s_fence->finished);
	/*
	 * A job of another file on this engine that waits for this one waits
	 * for its end, not only its start: run_job then sees its error.  (Every
	 * kernel rbln builds for has the flag: it came in 6.0.)
	 */
	set_bit(DRM_SCHED_FENCE_DONT_PIPELINE, &job->done->flags);
	for (i = 0; i < n; i++)
		dma_resv_add_fence(objs[i]->resv, job->done,
				   rbln_job_writes(job, objs[i]) ? DMA_RESV_USAGE_WRITE :
								   DMA_RESV_USAGE_READ);
	atomic_inc(&job->client->inflight);
	rbln_sched_push(job);
	mutex_unlock(&engine->submit_lock);
	drm_gem_unlock_reservations(objs, n, &ctx);
	kvfree(objs);
	return 0;

err_unlock:
	drm_gem_unlock_reservations(objs, n, &ctx);
err_free:
	kvfree(objs);
err_cleanup:
	job->scheduled = false;
	drm_sched_job_cleanup(&job->base);
	return ret;
}

/*
 * Runs @job now or schedules it; client->lock held.  @ended: the job ended
 * here, and the caller reports it (REPORT_END) instead of WAIT.
 */
static int rbln_job_launch(struct rbln_client *client, struct rbln_job *job, bool *ended)
{
	bool report = *ended;
	int ret;

	lockdep_assert_held(&client->lock);
	*ended = false;
	if (client->closing)
		return -ENODEV;			/* revoked meanwhile */
	if (atomic_read(&client->tracked) >= DRM_RBLN_MAX_INFLIGHT)
		return -ENOSPC;
	rbln_job_trace(job, rbln_job_submit);
	if (rbln_job_run_direct(job)) {
		if (job->status && !job->done)
			return -ENOMEM;
		*ended = report;
		/* Done already; only an unreported failure needs remembering for WAIT. */
		return job->status && !report ? rbln_job_remember(client, job) : 0;
	}
	/* Queued from here on: its tracking's allocation may wait already. */
	rbln_job_note_submit(job);
	ret = rbln_job_remember(client, job);
	if (ret)
		return ret;
	/*
	 * No direct job takes the engine from a SUBMIT on its way to queue one
	 * (best effort: a direct job that checked just before still runs first).
	 */
	atomic_inc(&job->engine->waiting);
	ret = rbln_job_schedule(job);
	atomic_dec(&job->engine->waiting);
	/* client->lock is ours already; SUBMIT's reference keeps @job alive. */
	if (ret && rbln_job_take_locked(client, job->seqno, job))
		rbln_job_put(job);
	return ret;
}

/* One job, as SUBMIT and each element of SUBMIT_BATCH describe it. */
static int rbln_submit(struct drm_device *drm, struct drm_rbln_submit *args,
		       struct drm_file *file)
{
	struct rbln_device *rdev = to_rbln_device(drm);
	struct rbln_client *client = file->driver_priv;
	struct rbln_out_sync out;
	struct rbln_engine *engine;
	struct rbln_job *job;
	bool ended;
	int ret, idx;

	if (args->flags & ~DRM_RBLN_SUBMIT_FLAGS || args->reserved || args->reserved2 ||
	    !args->copy_count ||
	    args->copy_count > DRM_RBLN_MAX_COPIES ||
	    args->copy_size < sizeof(struct drm_rbln_copy) || args->copy_size > PAGE_SIZE ||
	    args->in_sync_count > DRM_RBLN_MAX_IN_SYNCS || args->reserved3)
		return -EINVAL;
	/* Its times are reported with its end, and only for a profiler's job. */
	if (args->flags & DRM_RBLN_SUBMIT_REPORT_TIMES &&
	    (~args->flags & (DRM_RBLN_SUBMIT_TIMES | DRM_RBLN_SUBMIT_REPORT_END)))
		return -EINVAL;
	if (atomic_read(&client->tracked) >= DRM_RBLN_MAX_INFLIGHT)
		return -ENOSPC;		/* early; checked again under the lock */
	engine = rbln_submit_engine(rdev, args);
	if (!engine)
		return -EINVAL;
	if (READ_ONCE(engine->chiplet->down))
		return -ENODEV;
	ret = rbln_client_check_owner(client);
	if (ret)
		return ret;

	/* Out fields, as the caller may have left them: set only by a report. */
	args->submit_ns = args->start_ns = args->end_ns = 0;
	args->time_flags = 0;
	job = rbln_job_build(client, file, engine, args);
	if (IS_ERR(job))
		return PTR_ERR(job);
	/*
	 * Its submit time is read only where it may wait (a clock read costs a
	 * job dearly under emulation): before another thread's direct job on
	 * this file, before the scheduler's queue, or else its start here.
	 */
	job->want_times = args->flags & DRM_RBLN_SUBMIT_TIMES;
	ret = rbln_job_read_in_syncs(job, file, args);
	if (!ret)
		ret = rbln_out_sync_prepare(&out, file, &args->out_sync);
	if (ret) {
		rbln_job_put(job);
		return ret;
	}

	rbln_client_touch(client);
	/* Queue only while the device is alive: removal destroys the queues. */
	if (!drm_dev_enter(drm, &idx)) {
		ret = -ENODEV;
		goto out;
	}
	/* Another thread of this file may hold it for a direct job, or waiting for one. */
	if (!mutex_trylock(&client->lock)) {
		rbln_job_note_submit(job);
		if (mutex_lock_killable(&client->lock)) {
			ret = -EINTR;
			drm_dev_exit(idx);
			goto out;
		}
	}
	job->seqno = client->last_seqno + 1;
	ended = args->flags & DRM_RBLN_SUBMIT_REPORT_END;
	/* A file's first SUBMIT_TIMES job waits for its ring's allocation. */
	ret = 0;
	if (job->want_times && !client->times) {
		rbln_job_note_submit(job);
		ret = rbln_times_enable(client);
	}
	if (!ret)
		ret = rbln_job_launch(client, job, &ended);
	if (!ret) {
		/* A job that ran inside SUBMIT has no end work: its times go now. */
		if (job->want_times && !job->scheduled)
			rbln_times_report(job, args, ended);
		client->last_seqno++;
		args->seqno = client->last_seqno;
		args->ended = ended;
		args->status = ended ? job->status : 0;
		rbln_job_trace_syncs(job, &out);
		rbln_out_sync_signal(&out, job->done);
	}
	mutex_unlock(&client->lock);
	drm_dev_exit(idx);
out:
	rbln_out_sync_fini(&out);
	rbln_job_put(job);
	return ret;
}

int rbln_ioctl_submit(struct drm_device *drm, void *data, struct drm_file *file)
{
	return rbln_submit(drm, data, file);
}

/* The first SUBMIT's struct, without syncobjs: the smallest element of a batch. */
#define RBLN_SUBMIT_SIZE_V1	offsetof(struct drm_rbln_submit, in_syncs)
#define RBLN_SUBMIT_SIZE_MAX	SZ_4K

/*
 * Writes the out fields of @s to the element at @elem, @size bytes long:
 * seqno, and each of ended to time_flags that the element has, as one piece
 * (one copy fewer per element: they are contiguous, and whole, since
 * submit_size is a multiple of 8; reserved3, the caller's, is not written).
 */
static int rbln_batch_write_back(char __user *elem, u32 size, const struct drm_rbln_submit *s)
{
	const size_t ended = offsetof(struct drm_rbln_submit, ended);
	const size_t last = offsetofend(struct drm_rbln_submit, time_flags);

	BUILD_BUG_ON(offsetof(struct drm_rbln_submit, status) !=
		     offsetofend(struct drm_rbln_submit, ended));
	BUILD_BUG_ON(offsetof(struct drm_rbln_submit, submit_ns) !=
		     offsetofend(struct drm_rbln_submit, status));
	BUILD_BUG_ON(offsetof(struct drm_rbln_submit, time_flags) !=
		     offsetofend(struct drm_rbln_submit, end_ns));
	/* Whole u64s at any size SUBMIT_BATCH accepts (a multiple of 8, checked there). */
	BUILD_BUG_ON(!IS_ALIGNED(offsetof(struct drm_rbln_submit, submit_ns), sizeof(u64)));
	/* One that holds time_flags holds reserved3 (REPORT_TIMES' room check). */
	BUILD_BUG_ON(offsetofend(struct drm_rbln_submit, reserved3) != ALIGN(last, sizeof(u64)));
	if (copy_to_user(elem + offsetof(struct drm_rbln_submit, seqno), &s->seqno,
			 sizeof(s->seqno)))
		return -EFAULT;
	if (size >= offsetofend(struct drm_rbln_submit, status) &&
	    copy_to_user(elem + ended, &s->ended, min_t(size_t, size, last) - ended))
		return -EFAULT;
	return 0;
}

/* Element @elem as SUBMIT takes it; its out fields zeroed, here and in user memory. */
static int rbln_batch_read(struct drm_rbln_submit *s, char __user *elem, u32 size)
{
	int ret = copy_struct_from_user(s, sizeof(*s), elem, size);

	if (ret)
		return ret == -E2BIG ? -EINVAL : ret;	/* unknown trailing fields set */
	/* A report of the end needs the room to give it. */
	if (s->flags & DRM_RBLN_SUBMIT_REPORT_END &&
	    size < offsetofend(struct drm_rbln_submit, status))
		return -EINVAL;
	if (s->flags & DRM_RBLN_SUBMIT_REPORT_TIMES &&
	    size < offsetofend(struct drm_rbln_submit, reserved3))
		return -EINVAL;
	s->seqno = 0;
	s->ended = 0;
	s->status = 0;
	s->submit_ns = s->start_ns = s->end_ns = 0;
	s->time_flags = 0;
	/* Written before the job goes in, so that a submitted job is never unreported. */
	return rbln_batch_write_back(elem, size, s);
}

/*
 * Each element as its own SUBMIT, in order: a job sees the out_syncs of the
 * ones before it signalled (or holding their fences).  Nothing is held from
 * one element to the next, so each takes the direct path when it can.  Once
 * an element went in, the call succeeds: an error after it is reported in
 * .error, so that no retry (libdrm's drmIoctl() retries EINTR and EAGAIN)
 * submits the same jobs again.
 */
int rbln_ioctl_submit_batch(struct drm_device *drm, void *data, struct drm_file *file)
{
	struct rbln_client *client = file->driver_priv;
	struct drm_rbln_submit_batch *args = data;
	char __user *elems = u64_to_user_ptr(args->submits);
	struct drm_rbln_submit s;
	int ret = 0;
	u32 i;

	args->submitted = 0;
	args->error = 0;
	if (args->flags || args->reserved || !args->count || args->count > DRM_RBLN_MAX_BATCH ||
	    args->submit_size < RBLN_SUBMIT_SIZE_V1 || args->submit_size > RBLN_SUBMIT_SIZE_MAX ||
	    !IS_ALIGNED(args->submit_size, sizeof(u64)))
		return -EINVAL;
	/* Early and unlocked: room for the whole batch, so that it rarely stops halfway. */
	if (atomic_read(&client->tracked) + args->count > DRM_RBLN_MAX_INFLIGHT)
		return -ENOSPC;
	for (i = 0; i < args->count; i++) {
		char __user *elem = elems + (size_t)i * args->submit_size;

		ret = fatal_signal_pending(current) ? -EINTR :
		      rbln_batch_read(&s, elem, args->submit_size) ?: rbln_submit(drm, &s, file);
		if (ret)
			break;
		args->submitted++;
		/* Unmapped by another thread since it was checked: the job runs all the same. */
		ret = rbln_batch_write_back(elem, args->submit_size, &s);
		if (ret)
			break;
		cond_resched();
	}
	if (!args->submitted)
		return ret;		/* nothing went in: a restart is safe */
	/* User space reads .error: no restart codes there. */
	args->error = ret <= -ERESTARTSYS && ret >= -ERESTART_RESTARTBLOCK ? -EINTR : ret;
	return 0;
}

int rbln_ioctl_wait(struct drm_device *drm, void *data, struct drm_file *file)
{
	struct rbln_client *client = file->driver_priv;
	struct drm_rbln_wait *args = data;
	struct rbln_job *job;
	u64 deadline;
	long left;
	int ret;

	if (args->flags || !args->seqno || args->timeout_ns < 0)
		return -EINVAL;

	/* A SUBMIT of this file may hold it while it waits for another's direct job. */
	ret = mutex_lock_killable(&client->lock);
	if (ret)
		return ret;
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
	left = dma_fence_wait_timeout(job->done, true,
		min_t(u64, nsecs_to_jiffies64(args->timeout_ns), MAX_SCHEDULE_TIMEOUT));
	/* A zero timeout polls: a signalled fence gives 1 then. */
	if (left < 0) {
		/* A restarted call waits only for what was left (as i915's GEM_WAIT). */
		args->timeout_ns = max_t(s64, 0, deadline - ktime_get_ns());
	} else if (left > 0) {
		rbln_job_flush_end(job);	/* its buffers are back before WAIT returns */
		args->status = job->status;
		rbln_job_forget(client, args->seqno, job);	/* a failure is reported once */
	}
	rbln_job_put(job);
	return left < 0 ? left : left ? 0 : -ETIME;
}

/* SUBMIT checks this under the lock, and runs direct jobs holding it. */
static void rbln_client_stop_jobs(struct rbln_client *client)
{
	mutex_lock(&client->lock);
	WRITE_ONCE(client->closing, true);
	mutex_unlock(&client->lock);
}

/*
 * Revoke and close may drain at once, and the victim may still WAIT:
 * @job is not ours to read until rbln_job_forget() took it (by index).
 */
static void rbln_client_forget_jobs(struct rbln_client *client)
{
	struct rbln_job *job;
	unsigned long seqno;

	xa_for_each(&client->jobs, seqno, job)
		rbln_job_forget(client, seqno, job);
}

/*
 * The file is closing (the process exited or was killed) or its client is
 * being revoked: jobs not started yet are cancelled, the running ones finish
 * (a hung engine times out), and all have dropped their buffers after this.
 */
void rbln_client_drain_jobs(struct rbln_client *client)
{
	rbln_client_stop_jobs(client);
	/* Scheduled jobs not started yet end with -ECANCELED when their turn comes. */
	wait_event(client->idle, atomic_read(&client->inflight) == 0);
	rbln_client_forget_jobs(client);
}

/*
 * A task killed by SIGKILL: its signal is no longer pending while it exits,
 * so a killable wait would not see it (drm_sched_entity_flush() checks so).
 */
static bool rbln_current_killed(void)
{
	return fatal_signal_pending(current) ||
	       ((current->flags & PF_SIGNALED) && current->exit_code == SIGKILL);
}

int rbln_client_drain_jobs_killable(struct rbln_client *client)
{
	rbln_client_stop_jobs(client);
	/* Nothing in flight: done here, killed or not. */
	if (atomic_read(&client->inflight) &&
	    (rbln_current_killed() ||
	     wait_event_killable(client->idle, atomic_read(&client->inflight) == 0)))
		return -EINTR;
	rbln_client_forget_jobs(client);
	return 0;
}
