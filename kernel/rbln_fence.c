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

struct dma_fence *rbln_fence_create(struct rbln_engine *engine)
{
	struct rbln_fence *f = kzalloc(sizeof(*f), GFP_KERNEL);

	if (!f)
		return NULL;
	spin_lock_init(&f->lock);
	/* run_job is serialised per engine, so seqnos follow completion order. */
	dma_fence_init(&f->base, &rbln_fence_ops, &f->lock, engine->fence_context,
		       atomic64_inc_return(&engine->fence_seqno));
	return &f->base;
}
