// SPDX-License-Identifier: GPL-2.0-only
/*
 * Hardware fences: one per scheduled job, on its engine's timeline, signalled
 * when the backend reports the job's end.  Each fence carries its own lock so
 * it may outlive the device (a sync_file or another driver can hold it).
 *
 * Outliving the device and the module is where the care goes.  The core
 * calls a fence's ops (names, release) for as long as anyone holds it (7.x
 * stops at the signal only for fences without a release op, and ours has
 * one), and the scheduler's fence over ours names its timeline from the
 * engine's scheduler, inside the device.  So a started fence pins the module
 * and the device until it is freed: a held sync_file makes rmmod fail with
 * "in use" instead of leaving fences whose ops are gone.  Every scheduler
 * fence gets one of ours as its parent, even a job killed before it ran.
 * The pins are dropped from a work item (release may run in irq context, a
 * device's release sleeps) on the module's own queue, which module exit
 * drains: released fences wait on a list, and one work item frees them all,
 * one after another (a device's last put, which frees it, among them).
 */
#include <linux/dma-fence.h>
#include <linux/llist.h>
#include <linux/module.h>
#include <linux/slab.h>
#include <linux/workqueue.h>
#include <drm/drm_drv.h>

#include "rbln_device.h"
#include "rbln_job.h"

struct rbln_fence {
	struct dma_fence base;
	spinlock_t lock;
	struct drm_device *drm;		/* pinned while the fence lives, if any */
	struct llist_node free_node;	/* released, on rbln_fences_released */
};

static const char *rbln_fence_driver_name(struct dma_fence *fence)
{
	return "rbln";
}

static const char *rbln_fence_timeline_name(struct dma_fence *fence)
{
	return "rbln-engine";
}

static LLIST_HEAD(rbln_fences_released);

static void rbln_fences_free_work(struct work_struct *work)
{
	struct llist_node *released = llist_del_all(&rbln_fences_released);
	struct rbln_fence *f, *next;

	llist_for_each_entry_safe(f, next, released, free_node) {
		if (f->drm)
			drm_dev_put(f->drm);
		BUILD_BUG_ON(offsetof(struct rbln_fence, base));
		dma_fence_free(&f->base);	/* after a grace period: readers may peek under RCU */
		module_put(THIS_MODULE);	/* last: module exit drains the queue we run on */
		cond_resched();			/* removal may release thousands at once */
	}
}

static DECLARE_WORK(rbln_fences_free, rbln_fences_free_work);

static void rbln_fence_release(struct dma_fence *fence)
{
	struct rbln_fence *f = container_of(fence, struct rbln_fence, base);

	/* The first on the list queues the work; the others ride along. */
	if (llist_add(&f->free_node, &rbln_fences_released))
		rbln_jobs_queue_work(&rbln_fences_free);
}

static const struct dma_fence_ops rbln_fence_ops = {
	.get_driver_name = rbln_fence_driver_name,
	.get_timeline_name = rbln_fence_timeline_name,
	.release = rbln_fence_release,
};

/* Starts @f on @context with its pins (see the top of the file); @drm may be NULL. */
static struct dma_fence *rbln_fence_init(struct rbln_fence *f, struct drm_device *drm,
					 u64 context, u64 seqno)
{
	spin_lock_init(&f->lock);
	__module_get(THIS_MODULE);
	f->drm = drm;
	if (drm)
		drm_dev_get(drm);
	dma_fence_init(&f->base, &rbln_fence_ops, &f->lock, context, seqno);
	return &f->base;
}

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
	/* run_job is serialised per engine, so seqnos follow completion order. */
	return rbln_fence_init(f, &engine->chiplet->rdev->drm, engine->fence_context,
			       atomic64_inc_return(&engine->fence_seqno));
}

/* One that never started (its job was cancelled before it ran). */
void rbln_fence_free_unstarted(struct rbln_fence *f)
{
	kfree(f);
}

/*
 * A fence that ends as it starts, with @error: a failed direct job's, or the
 * parent given to a job killed before it ran.  On a timeline of its own: on
 * the engine's it would signal before an earlier job's fence.  @drm: the
 * device to pin, if a scheduler fence will name its timeline from it.
 */
struct dma_fence *rbln_fence_start_ended(struct rbln_fence *f, struct drm_device *drm, int error)
{
	struct dma_fence *fence = rbln_fence_init(f, drm, dma_fence_context_alloc(1), 1);

	dma_fence_set_error(fence, error);
	dma_fence_signal(fence);
	return fence;
}

struct dma_fence *rbln_fence_create_failed(int error)
{
	struct rbln_fence *f = rbln_fence_alloc();

	return f ? rbln_fence_start_ended(f, NULL, error) : NULL;
}
