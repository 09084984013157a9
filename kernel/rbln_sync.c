// SPDX-License-Identifier: GPL-2.0-only
/*
 * Syncobjs of SUBMIT: the fences a job waits for (in_syncs) and the syncobj
 * that receives its own fence (out_sync).  Fences already signalled without
 * an error are dropped at submit, so a job whose inputs are done may still
 * take the direct path.
 */
#include <linux/dma-fence.h>
#include <linux/dma-fence-chain.h>
#include <linux/dma-fence-unwrap.h>
#include <linux/once.h>
#include <linux/random.h>
#include <linux/siphash.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <drm/drm_file.h>
#include <drm/drm_syncobj.h>

#include "rbln_job.h"
#include "rbln_sync.h"
#include "rbln_trace.h"

/*
 * A timeline point resolves to a dma_fence_chain node, which carries no error
 * of its own, and a merged sync_file to a dma_fence_array, which carries one
 * only once its signalling was enabled: the fences inside them do.  A point's
 * error is that of the fence given to the point (the chain's earlier links
 * are pruned as they signal, so theirs would be seen only by chance).  An
 * error is set before its fence signals, so this also sees the failure of a
 * job on the same engine whose fence is about to signal.
 */
/* Only negative: an array not yet signalled holds a positive "pending" mark. */
static int rbln_fence_own_error(const struct dma_fence *fence)
{
	int error = READ_ONCE(fence->error);

	return error < 0 ? error : 0;
}

int rbln_fence_error(struct dma_fence *fence)
{
	struct dma_fence_unwrap iter;
	struct dma_fence *f;
	int error = rbln_fence_own_error(fence);

	/* Most inputs are a plain job fence (or the stub): nothing inside to walk. */
	if (!dma_fence_is_chain(fence) && !dma_fence_is_array(fence))
		return error;
	/* To the end: the walk holds a reference until then. */
	dma_fence_unwrap_for_each(f, &iter, dma_fence_chain_contained(fence))
		if (!error)
			error = rbln_fence_own_error(f);
	return error;
}

bool rbln_job_deps_signalled(const struct rbln_job *job)
{
	u32 i;

	for (i = 0; i < job->nr_deps; i++)
		if (!dma_fence_is_signaled(job->deps[i]))
			return false;
	return true;
}

/*
 * A keyed hash, not hash_64(): that one is a multiply anyone can undo, and
 * the trace buffer would hand out kernel addresses (KASLR) to whoever may
 * read tracefs.
 */
u64 rbln_sync_trace_key(const struct drm_syncobj *obj)
{
	static siphash_key_t secret;

	get_random_once(&secret, sizeof(secret));
	return siphash_1u64((u64)(uintptr_t)obj, &secret);
}

/* While rbln_job_wait is traced: which syncobj @sync names, for the tracepoint. */
static void rbln_job_note_wait(struct rbln_job *job, struct drm_file *file,
			       const struct drm_rbln_sync *sync, u32 count)
{
	struct drm_syncobj *obj;

	if (!job->trace_waits) {
		/* Tracing only: without the room the waits go untraced. */
		job->trace_waits = kcalloc(count, sizeof(*job->trace_waits), GFP_KERNEL_ACCOUNT);
		if (!job->trace_waits)
			return;
	}
	obj = drm_syncobj_find(file, sync->handle);
	if (!obj)
		return;
	job->trace_waits[job->nr_trace_waits].sync = rbln_sync_trace_key(obj);
	job->trace_waits[job->nr_trace_waits].point = sync->point;
	job->nr_trace_waits++;
	drm_syncobj_put(obj);
}

int rbln_job_read_in_syncs(struct rbln_job *job, struct drm_file *file,
			   const struct drm_rbln_submit *args)
{
	const struct drm_rbln_sync __user *u = u64_to_user_ptr(args->in_syncs);
	struct drm_rbln_sync sync;
	struct dma_fence *fence;
	u32 i;
	int ret;

	for (i = 0; i < args->in_sync_count; i++) {
		if (copy_from_user(&sync, &u[i], sizeof(sync)))
			return -EFAULT;
		if (sync.flags)
			return -EINVAL;
		ret = drm_syncobj_find_fence(file, sync.handle, sync.point, 0, &fence);
		if (ret)
			return ret == -ENOMEM ? ret : -EINVAL;	/* no such syncobj, or no fence */
		if (trace_rbln_job_wait_enabled())
			rbln_job_note_wait(job, file, &sync, args->in_sync_count);
		if (dma_fence_is_signaled(fence) && !rbln_fence_error(fence)) {
			dma_fence_put(fence);		/* nothing to wait for */
			continue;
		}
		/* Room for this and the rest, made only when there is one to keep. */
		if (!job->deps) {
			job->deps = kcalloc(args->in_sync_count - i, sizeof(*job->deps),
					    GFP_KERNEL_ACCOUNT);
			if (!job->deps) {
				dma_fence_put(fence);
				return -ENOMEM;
			}
		}
		job->deps[job->nr_deps++] = fence;
	}
	return 0;
}

int rbln_out_sync_prepare(struct rbln_out_sync *out, struct drm_file *file,
			  const struct drm_rbln_sync *sync)
{
	memset(out, 0, sizeof(*out));
	if (sync->flags)
		return -EINVAL;
	if (!sync->handle)
		return sync->point ? -EINVAL : 0;
	out->syncobj = drm_syncobj_find(file, sync->handle);
	if (!out->syncobj)
		return -EINVAL;
	out->point = sync->point;
	if (out->point) {
		/* Allocated now: once the job is queued nothing may fail. */
		out->chain = dma_fence_chain_alloc();
		if (!out->chain) {
			rbln_out_sync_fini(out);
			return -ENOMEM;
		}
	}
	return 0;
}

/* @fence NULL: the job has ended well already (a direct success). */
void rbln_out_sync_signal(struct rbln_out_sync *out, struct dma_fence *fence)
{
	struct dma_fence *stub = NULL;

	if (!out->syncobj)
		return;
	if (!fence)
		fence = stub = dma_fence_get_stub();
	if (out->chain) {
		drm_syncobj_add_point(out->syncobj, out->chain, fence, out->point);
		out->chain = NULL;		/* the syncobj's now */
	} else {
		drm_syncobj_replace_fence(out->syncobj, fence);
	}
	dma_fence_put(stub);
}

void rbln_out_sync_fini(struct rbln_out_sync *out)
{
	dma_fence_chain_free(out->chain);
	if (out->syncobj)
		drm_syncobj_put(out->syncobj);
	memset(out, 0, sizeof(*out));
}
