// SPDX-License-Identifier: GPL-2.0-only
/*
 * Device memory.  Each chiplet's memory is managed by the kernel's buddy
 * allocator (rbln_buddy.h): a buffer's capacity is taken from it when the
 * buffer is created, lazy or eager, so placing the backing later cannot fail
 * for lack of device memory; "used" is what the allocators hand out, "placed"
 * what has backing now.  Freeing, fragmentation and ENOSPC are the
 * allocator's.
 *
 * Device addresses: chiplet N's memory is the window at N << 40, and a buffer
 * on one chiplet is one range of it (window base + the allocator's offset).
 * An interleaved buffer is spread page by page over the chiplets, leftover
 * pages on chiplet 0: each chiplet's share comes from its own allocator, in
 * blocks anywhere (an interleaving device maps them), and the buffer's address
 * is one range of the interleaved window above the last chiplet's, an
 * allocator of the device's size that holds addresses only.
 *
 * Guard pages: on an empty window every page would be split off the largest
 * root (~18 levels for 32 GiB) and every free would merge it all back, which
 * made a small buffer's create+free several times slower.  So each window's
 * allocator holds its first page as a guard while it can: the path to it
 * stays split, there is a free block of every order, and small buffers
 * neither split nor merge far.  The guard is user memory lent out, not a
 * reserve: it is not counted as used, and a request that fails while the
 * guard is held is retried without it (so capacity, alignment and ENOSPC are
 * exactly the allocator's); the guard is taken again when page 0 is free.
 */
#include <linux/math64.h>
#include <linux/slab.h>
#include <drm/drm_gem.h>
#include <drm/drm_managed.h>

#include "rbln_device.h"
#include "rbln_gem.h"

#define RBLN_INTERLEAVED_WINDOW	RBLN_MAX_CHIPLETS

static u64 rbln_share(const struct rbln_device *rdev, u32 chiplet, u32 i, u64 size)
{
	u64 pages = size >> PAGE_SHIFT;
	u32 rem;

	if (chiplet != DRM_RBLN_CHIPLET_INTERLEAVED)
		return i == chiplet ? size : 0;
	rem = do_div(pages, rdev->nr_chiplets);	/* pages becomes the quotient */
	return (pages + (i == 0 ? rem : 0)) << PAGE_SHIFT;
}

void rbln_mem_placed(struct rbln_device *rdev, u32 chiplet, s64 delta)
{
	u64 size = abs(delta);
	unsigned int i;

	for (i = 0; i < rdev->nr_chiplets; i++) {
		s64 share = rbln_share(rdev, chiplet, i, size);

		atomic64_add(delta < 0 ? -share : share, &rdev->chiplets[i].memory_placed);
	}
}

/* Free in window @w, counting the guard page as free. */
static u64 rbln_mem_avail(const struct rbln_device *rdev, unsigned int w)
{
	return rdev->mem_windows[w].avail +
	       (list_empty(&rdev->mem_guards[w]) ? 0 : PAGE_SIZE);
}

/* memory_used follows the allocators, for readers that take no lock. */
static void rbln_mem_update_used(struct rbln_device *rdev)
{
	unsigned int i;

	for (i = 0; i < rdev->nr_chiplets; i++)
		atomic64_set(&rdev->chiplets[i].memory_used,
			     rdev->mem_windows[i].size - rbln_mem_avail(rdev, i));
}

/* Takes the guard pages not held, where page 0 is free (see the top). */
static void rbln_mem_guard(struct rbln_device *rdev)
{
	unsigned int w;

	for (w = 0; w < RBLN_MEM_WINDOWS; w++)
		if (rdev->mem_windows[w].size && list_empty(&rdev->mem_guards[w]) &&
		    rbln_buddy_alloc_blocks(&rdev->mem_windows[w], 0, PAGE_SIZE, PAGE_SIZE,
					    PAGE_SIZE, &rdev->mem_guards[w], 0))
			INIT_LIST_HEAD(&rdev->mem_guards[w]);
}

/* @size from window @w, at one range or anywhere; the guard page if need be. */
static int rbln_mem_take(struct rbln_device *rdev, unsigned int w, u64 size,
			 bool range, struct list_head *blocks)
{
	struct rbln_buddy *mm = &rdev->mem_windows[w];
	int ret;

	if (size > rbln_mem_avail(rdev, w))
		return -ENOSPC;
	ret = range ? rbln_buddy_alloc_range(mm, size, blocks) :
		      rbln_buddy_alloc_any(mm, size, blocks);
	if (ret != -ENOSPC || list_empty(&rdev->mem_guards[w]))
		return ret;
	rbln_buddy_free_list(mm, &rdev->mem_guards[w]);
	INIT_LIST_HEAD(&rdev->mem_guards[w]);
	return range ? rbln_buddy_alloc_range(mm, size, blocks) :
		       rbln_buddy_alloc_any(mm, size, blocks);
}

static void rbln_mem_release(struct rbln_device *rdev, struct rbln_mem *mem)
{
	unsigned int w;

	for (w = 0; w < RBLN_MEM_WINDOWS; w++)
		rbln_buddy_free_list(&rdev->mem_windows[w], &mem->blocks[w]);
	rbln_mem_guard(rdev);
}

int rbln_mem_alloc(struct rbln_device *rdev, u32 chiplet, u64 size, struct rbln_mem *mem)
{
	bool interleaved = chiplet == DRM_RBLN_CHIPLET_INTERLEAVED;
	unsigned int w = interleaved ? RBLN_INTERLEAVED_WINDOW : chiplet;
	unsigned int i;
	int ret;

	for (i = 0; i < RBLN_MEM_WINDOWS; i++)
		INIT_LIST_HEAD(&mem->blocks[i]);

	mutex_lock(&rdev->mem_lock);
	/* The address; for a buffer on one chiplet also its memory. */
	ret = rbln_mem_take(rdev, w, size, true, &mem->blocks[w]);
	for (i = 0; !ret && interleaved && i < rdev->nr_chiplets; i++) {
		u64 share = rbln_share(rdev, chiplet, i, size);

		if (share)
			ret = rbln_mem_take(rdev, i, share, false, &mem->blocks[i]);
	}
	if (ret)
		rbln_mem_release(rdev, mem);	/* all or nothing */
	else
		mem->address = w * RBLN_CHIPLET_WINDOW +
			       rbln_buddy_blocks_start(&mem->blocks[w]);
	if (!ret)
		rbln_mem_guard(rdev);	/* if it was given up but page 0 stayed free */
	rbln_mem_update_used(rdev);
	mutex_unlock(&rdev->mem_lock);
	return ret;
}

void rbln_mem_free(struct rbln_device *rdev, struct rbln_mem *mem)
{
	mutex_lock(&rdev->mem_lock);
	rbln_mem_release(rdev, mem);
	rbln_mem_update_used(rdev);
	mutex_unlock(&rdev->mem_lock);
}

static void rbln_mem_fini(struct drm_device *drm, void *unused)
{
	struct rbln_device *rdev = to_rbln_device(drm);
	unsigned int w;

	/* Buffers hold the device, so all their memory is back by now. */
	for (w = 0; w < RBLN_MEM_WINDOWS; w++) {
		if (!rdev->mem_windows[w].size)
			continue;
		mutex_lock(&rdev->mem_lock);
		rbln_buddy_free_list(&rdev->mem_windows[w], &rdev->mem_guards[w]);
		mutex_unlock(&rdev->mem_lock);
		rbln_buddy_fini(&rdev->mem_windows[w]);
	}
}

/* The chiplets' memory_total must be set. */
int rbln_mem_init(struct rbln_device *rdev)
{
	unsigned int w;
	int ret;

	mutex_init(&rdev->mem_lock);
	for (w = 0; w < RBLN_MEM_WINDOWS; w++)
		INIT_LIST_HEAD(&rdev->mem_guards[w]);
	for (w = 0; w < RBLN_MEM_WINDOWS; w++) {
		struct rbln_buddy *mm = &rdev->mem_windows[w];
		u64 size = w == RBLN_INTERLEAVED_WINDOW ? rdev->info.memory_total :
			   w < rdev->nr_chiplets ? rdev->chiplets[w].memory_total : 0;

		memset(mm, 0, sizeof(*mm));	/* size 0: no allocator */
		if (size < PAGE_SIZE)
			continue;
		ret = rbln_buddy_init(mm, size, PAGE_SIZE);
		if (ret) {
			memset(mm, 0, sizeof(*mm));
			rbln_mem_fini(&rdev->drm, NULL);
			return ret;
		}
		rbln_buddy_set_lock(mm, &rdev->mem_lock);
	}
	mutex_lock(&rdev->mem_lock);
	rbln_mem_guard(rdev);
	mutex_unlock(&rdev->mem_lock);
	return drmm_add_action_or_reset(&rdev->drm, rbln_mem_fini, NULL);
}

/*
 * Only @client_id holds it and it was never shared: a reclaim may take it.
 * (rbln_bo_revoke() checks exported again under the buffer's lock.)
 */
static bool rbln_bo_exclusive(const struct rbln_bo *bo)
{
	return bo->base.handle_count <= 1 && !READ_ONCE(bo->exported) &&
	       !rbln_bo_is_imported(bo);
}

u64 rbln_mem_revoke_client(struct rbln_device *rdev, u64 client_id)
{
	struct rbln_bo *bo, **victims;
	unsigned int n = 0, i;
	u64 freed = 0;

	mutex_lock(&rdev->bos_lock);
	list_for_each_entry(bo, &rdev->bos, link)
		n++;
	/*
	 * Sized by every user's buffers, so not charged to the one who reclaims
	 * (an admin's RECLAIM must not fail on a cgroup others filled); without
	 * it the handles' deletion still frees the buffers, uncounted.
	 */
	victims = kvcalloc(n, sizeof(*victims), GFP_KERNEL);
	n = 0;
	if (victims)
		list_for_each_entry(bo, &rdev->bos, link)
			if (bo->client_id == client_id && rbln_bo_exclusive(bo) &&
			    kref_get_unless_zero(&bo->base.refcount))
				victims[n++] = bo;
	mutex_unlock(&rdev->bos_lock);

	for (i = 0; i < n; i++) {
		freed += rbln_bo_revoke(victims[i]);
		drm_gem_object_put(&victims[i]->base);
	}
	kvfree(victims);
	return freed;
}
