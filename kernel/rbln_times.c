// SPDX-License-Identifier: GPL-2.0-only
/*
 * Device times of a file's jobs.  A job submitted with DRM_RBLN_SUBMIT_TIMES
 * notes its submit time where it may start to wait in SUBMIT (a job that
 * waits for nothing there was submitted as it started); when it has ended,
 * its end work (or SUBMIT, for a job that ran inside it) puts one record
 * into the file's ring, or SUBMIT gives the times back in its own struct
 * (DRM_RBLN_SUBMIT_REPORT_TIMES, for a job that ended inside it).  The start
 * is when run_job gave it to the engine: that is when 6.1's scheduler
 * signals the "scheduled" fence, but 6.12's signals it only after run_job
 * returned, possibly after a small job's end, so its timestamp is not used.
 * The end is the hardware fence's timestamp, which rbln_job_end() stamps
 * with the engine's end (the work may run before that fence is signalled:
 * then the same time, from the job).  The ring is made on
 * the first such job, so files that never ask pay nothing.
 *
 * Writers only append (a full ring drops the new record and counts it);
 * only JOB_TIMES takes records out, one reader at a time.  The records it
 * found there stay where they are until it lets them go, so it copies them
 * to user space straight from the ring, in one piece (two where the ring
 * wraps), without the spinlock: user memory is never touched under a lock
 * that a job's end takes.
 */
#include <linux/dma-fence.h>
#include <linux/minmax.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/slab.h>
#include <linux/spinlock.h>
#include <linux/uaccess.h>
#include <drm/drm_file.h>

#include "rbln_client.h"
#include "rbln_device.h"
#include "rbln_job.h"
#include "rbln_times.h"

#define RBLN_TIMES_ENTRY_MAX	4096

struct rbln_times {
	spinlock_t lock;		/* head, count, lost */
	struct mutex reader;		/* one JOB_TIMES at a time */
	u32 head;			/* oldest record */
	u32 count;
	u32 lost;
	struct drm_rbln_job_time *ring;	/* DRM_RBLN_JOB_TIMES_RING records */
};

int rbln_times_enable(struct rbln_client *client)
{
	struct rbln_times *times;

	lockdep_assert_held(&client->lock);
	if (client->times)
		return 0;
	times = kzalloc(sizeof(*times), GFP_KERNEL_ACCOUNT);
	if (!times)
		return -ENOMEM;
	/* An array of bookkeeping, as a job's copies: charged to the file's cgroup. */
	times->ring = kvcalloc(DRM_RBLN_JOB_TIMES_RING, sizeof(*times->ring), GFP_KERNEL_ACCOUNT);
	if (!times->ring) {
		kfree(times);
		return -ENOMEM;
	}
	spin_lock_init(&times->lock);
	mutex_init(&times->reader);
	/* Readers look without client->lock: the ring is whole before they see it. */
	smp_store_release(&client->times, times);
	return 0;
}

void rbln_times_free(struct rbln_client *client)
{
	if (!client->times)
		return;
	mutex_destroy(&client->times->reader);
	kvfree(client->times->ring);
	kfree(client->times);
	client->times = NULL;
}

/* A signalled fence's time, or @fallback for one not (yet) signalled. */
static u64 rbln_fence_time_ns(struct dma_fence *fence, u64 fallback)
{
	if (fence && test_bit(DMA_FENCE_FLAG_TIMESTAMP_BIT, &fence->flags))
		return ktime_to_ns(fence->timestamp);
	return fallback;
}

/*
 * @job's record, as JOB_TIMES gives it.  Inline: SUBMIT's report reads only
 * the times, and a profiled job's SUBMIT pays no call for it.
 */
static __always_inline struct drm_rbln_job_time rbln_times_of(const struct rbln_job *job)
{
	struct drm_rbln_job_time rec = {
		.seqno = job->seqno,
		.submit_ns = job->submit_ns,
		.status = job->status,
		.chiplet = job->engine->chiplet->index,
		.engine = job->engine->kind,
	};
	u64 start = job->start_ns, end = job->end_ns;

	if (job->scheduled)
		end = rbln_fence_time_ns(job->hw_fence, end);
	/* A job that ran in part inside SUBMIT (start_ns then) ran, if not its rest. */
	if (job->started || job->ran_part)
		rec.flags |= DRM_RBLN_JOB_TIME_RAN;
	else
		start = end;
	/* Never read: it waited for nothing in SUBMIT and ended there unstarted. */
	if (!rec.submit_ns)
		rec.submit_ns = start;
	if (job->timed_out)
		rec.flags |= DRM_RBLN_JOB_TIME_TIMED_OUT;
	/* Clocks read at different places: keep the documented order. */
	rec.start_ns = max(start, rec.submit_ns);
	rec.end_ns = max(end, rec.start_ns);
	if (!(rec.flags & DRM_RBLN_JOB_TIME_RAN))
		rec.start_ns = rec.end_ns;
	return rec;
}

void rbln_times_record(struct rbln_job *job)
{
	struct rbln_times *times = job->client->times;
	struct drm_rbln_job_time rec;

	if (WARN_ON_ONCE(!times))
		return;
	rec = rbln_times_of(job);
	spin_lock(&times->lock);
	if (times->count < DRM_RBLN_JOB_TIMES_RING) {
		times->ring[(times->head + times->count) % DRM_RBLN_JOB_TIMES_RING] = rec;
		times->count++;
	} else {
		times->lost++;
	}
	spin_unlock(&times->lock);
}

/* SUBMIT's own fields, written from @job's record (kept in registers). */
static __always_inline void rbln_times_to_args(const struct rbln_job *job,
					       struct drm_rbln_submit *args)
{
	const struct drm_rbln_job_time rec = rbln_times_of(job);

	args->submit_ns = rec.submit_ns;
	args->start_ns = rec.start_ns;
	args->end_ns = rec.end_ns;
	args->time_flags = rec.flags;
}

void rbln_times_report(struct rbln_job *job, struct drm_rbln_submit *args, bool ended)
{
	/* No record and no JOB_TIMES for it: the cost of a profiler's small job. */
	if (ended && args->flags & DRM_RBLN_SUBMIT_REPORT_TIMES)
		rbln_times_to_args(job, args);
	else
		rbln_times_record(job);
}

/*
 * @n records from @src to the user's elements @first on, @entry_size bytes
 * each (a longer element's tail zeroed); *@done: how many arrived whole.
 */
static int rbln_times_copy_out(char __user *uptr, u32 entry_size, u32 first,
			       const struct drm_rbln_job_time *src, u32 n, u32 *done)
{
	const size_t size = sizeof(*src);
	char __user *dst = uptr + (size_t)first * entry_size;
	unsigned long left;
	u32 i;

	if (entry_size == size) {
		left = copy_to_user(dst, src, n * size);
		*done = n - DIV_ROUND_UP(left, size);
		return left ? -EFAULT : 0;
	}
	for (i = 0; i < n; i++, dst += entry_size)
		if (copy_to_user(dst, &src[i], size) || clear_user(dst + size, entry_size - size))
			break;
	*done = i;
	return i < n ? -EFAULT : 0;
}

int rbln_ioctl_job_times(struct drm_device *drm, void *data, struct drm_file *file)
{
	struct rbln_client *client = file->driver_priv;
	struct drm_rbln_job_times *args = data;
	struct rbln_times *times = smp_load_acquire(&client->times);
	char __user *uptr = u64_to_user_ptr(args->entries);
	u32 head, avail, written = 0, done;
	int ret = 0;

	if (args->flags || args->reserved || args->entry_size < sizeof(struct drm_rbln_job_time) ||
	    args->entry_size > RBLN_TIMES_ENTRY_MAX)
		return -EINVAL;
	avail = args->count;
	args->count = 0;
	args->lost = 0;
	args->pending = 0;
	if (!times)
		return 0;		/* no SUBMIT_TIMES job yet */

	mutex_lock(&times->reader);
	spin_lock(&times->lock);
	head = times->head;
	avail = min(avail, times->count);
	spin_unlock(&times->lock);
	/* [head, head + avail) is ours until head moves: writers only append after it. */
	while (written < avail) {
		u32 at = (head + written) % DRM_RBLN_JOB_TIMES_RING;
		u32 n = min(avail - written, DRM_RBLN_JOB_TIMES_RING - at);

		ret = rbln_times_copy_out(uptr, args->entry_size, written, &times->ring[at], n, &done);
		written += done;
		if (ret)
			break;
	}
	/* Only what reached user space leaves the ring. */
	spin_lock(&times->lock);
	times->head = (times->head + written) % DRM_RBLN_JOB_TIMES_RING;
	times->count -= written;
	args->lost = times->lost;
	times->lost = 0;
	args->pending = times->count;
	spin_unlock(&times->lock);
	mutex_unlock(&times->reader);
	args->count = written;
	return ret;
}
