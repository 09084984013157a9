// SPDX-License-Identifier: GPL-2.0-only
/*
 * Hardware fences: one per scheduled job, on its engine's timeline, signalled
 * when the backend reports the job's end.  Each fence carries its own lock so
 * it may outlive the device (a sync_file or another driver can hold it).
 */
#include <linux/dma-fence.h>
#include <linux/slab.h>

#include "rbln_device.h"
#include "rbln_job.h"

struct rbln_fence {
	struct dma_fence base;
	spinlock_t lock;
};

static const char *rbln_fence_driver_name(struct dma_fence *fence)
{
	return "rbln";
}

static const char *rbln_fence_timeline_name(struct dma_fence *fence)
{
	return "rbln-engine";
}

static const struct dma_fence_ops rbln_fence_ops = {
	.get_driver_name = rbln_fence_driver_name,
	.get_timeline_name = rbln_fence_timeline_name,
};

/*
 * Allocated when the job is queued (in SUBMIT, where allocating may sleep),
 * started when it runs: run_job is on the fence-signalling path.
 */
struct rbln_fence *rbln_fence_alloc(void)
{
	return kzalloc(sizeof(struct rbln_fence), GFP_KERNEL_ACCOUNT);
}

struct dma_fence *rbln_fence_start(struct rbln_fence *f, struct rbln_engine *engine)
{
	spin_lock_init(&f->lock);
	/* run_job is serialised per engine, so seqnos follow completion order. */
	dma_fence_init(&f->base, &rbln_fence_ops, &f->lock, engine->fence_context,
		       atomic64_inc_return(&engine->fence_seqno));
	return &f->base;
}

/* One that never started (its job was cancelled before it ran). */
void rbln_fence_free_unstarted(struct rbln_fence *f)
{
	kfree(f);
}

/*
 * A failed direct job's fence, signalled at once.  On a timeline of its own:
 * on the engine's it could signal before an earlier scheduled job's fence.
 */
struct dma_fence *rbln_fence_create_failed(int error)
{
	struct rbln_fence *f = rbln_fence_alloc();

	if (!f)
		return NULL;
	spin_lock_init(&f->lock);
	dma_fence_init(&f->base, &rbln_fence_ops, &f->lock, dma_fence_context_alloc(1), 1);
	dma_fence_set_error(&f->base, error);
	dma_fence_signal(&f->base);
	return &f->base;
}
