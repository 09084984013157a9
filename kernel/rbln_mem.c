// SPDX-License-Identifier: GPL-2.0-only
/*
 * Device memory accounting.  "used" is capacity taken by buffers (lazy ones
 * included: capacity is reserved at creation so that placement later cannot
 * fail for lack of it); "placed" is what has backing now.  An interleaved
 * buffer is spread page by page over the chiplets, leftover pages on chiplet 0.
 */
#include <linux/math64.h>
#include <linux/slab.h>
#include <drm/drm_gem.h>

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

/* Only @client_id holds it and it is not shared: a reclaim may take it. */
static bool rbln_bo_exclusive(const struct rbln_bo *bo)
{
	return bo->base.handle_count <= 1 && !bo->base.dma_buf && !bo->base.import_attach;
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
