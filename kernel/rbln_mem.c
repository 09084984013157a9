// SPDX-License-Identifier: GPL-2.0-only
/*
 * Device memory accounting.  "used" is capacity taken by buffers (lazy ones
 * included: capacity is reserved at creation so that placement later cannot
 * fail for lack of it); "placed" is what has backing now.  An interleaved
 * buffer is spread page by page over the chiplets, leftover pages on chiplet 0.
 *
 * Device addresses: chiplet N's memory is the window at N << 40, interleaved
 * buffers take theirs from the window above the last chiplet's.  Ranges come
 * from a drm_mm per window, so they are reused and never overlap.
 */
#include <linux/math64.h>
#include <linux/slab.h>
#include <drm/drm_gem.h>
#include <drm/drm_managed.h>

#include "rbln_device.h"
#include "rbln_gem.h"

static u64 rbln_share(const struct rbln_device *rdev, u32 chiplet, u32 i, u64 size)
{
	u64 pages = size >> PAGE_SHIFT;
	u32 rem;

	if (chiplet != DRM_RBLN_CHIPLET_INTERLEAVED)
		return i == chiplet ? size : 0;
	rem = do_div(pages, rdev->nr_chiplets);	/* pages becomes the quotient */
	return (pages + (i == 0 ? rem : 0)) << PAGE_SHIFT;
}

int rbln_mem_reserve(struct rbln_device *rdev, u32 chiplet, u64 size)
{
	unsigned int i;
	int ret = 0;

	spin_lock(&rdev->mem_lock);
	for (i = 0; i < rdev->nr_chiplets; i++) {
		const struct rbln_chiplet *c = &rdev->chiplets[i];

		if (rbln_share(rdev, chiplet, i, size) >
		    c->memory_total - atomic64_read(&c->memory_used))
			ret = -ENOSPC;
	}
	if (!ret)
		for (i = 0; i < rdev->nr_chiplets; i++)
			atomic64_add(rbln_share(rdev, chiplet, i, size),
				     &rdev->chiplets[i].memory_used);
	spin_unlock(&rdev->mem_lock);
	return ret;
}

void rbln_mem_unreserve(struct rbln_device *rdev, u32 chiplet, u64 size)
{
	unsigned int i;

	spin_lock(&rdev->mem_lock);
	for (i = 0; i < rdev->nr_chiplets; i++)
		atomic64_sub(rbln_share(rdev, chiplet, i, size), &rdev->chiplets[i].memory_used);
	spin_unlock(&rdev->mem_lock);
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

static unsigned int rbln_window(u32 chiplet)
{
	return chiplet == DRM_RBLN_CHIPLET_INTERLEAVED ? RBLN_MAX_CHIPLETS : chiplet;
}

static void rbln_mem_fini(struct drm_device *drm, void *unused)
{
	struct rbln_device *rdev = to_rbln_device(drm);
	unsigned int w;

	/* Buffers hold the device, so all their ranges are back by now. */
	for (w = 0; w <= RBLN_MAX_CHIPLETS; w++)
		if (drm_mm_initialized(&rdev->address_space[w]))
			drm_mm_takedown(&rdev->address_space[w]);
}

/* The chiplets' memory_total must be set. */
int rbln_mem_init(struct rbln_device *rdev)
{
	unsigned int w;

	for (w = 0; w <= RBLN_MAX_CHIPLETS; w++) {
		u64 size = w == RBLN_MAX_CHIPLETS ? rdev->info.memory_total :
			   w < rdev->nr_chiplets ? rdev->chiplets[w].memory_total : 0;

		if (size)
			drm_mm_init(&rdev->address_space[w], w * RBLN_CHIPLET_WINDOW, size);
	}
	return drmm_add_action_or_reset(&rdev->drm, rbln_mem_fini, NULL);
}

int rbln_address_alloc(struct rbln_device *rdev, u32 chiplet, u64 size,
		       struct drm_mm_node *address)
{
	int ret;

	spin_lock(&rdev->mem_lock);
	ret = drm_mm_insert_node(&rdev->address_space[rbln_window(chiplet)], address, size);
	spin_unlock(&rdev->mem_lock);
	return ret;
}

void rbln_address_free(struct rbln_device *rdev, struct drm_mm_node *address)
{
	if (!drm_mm_node_allocated(address))
		return;
	spin_lock(&rdev->mem_lock);
	drm_mm_remove_node(address);
	spin_unlock(&rdev->mem_lock);
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
