// SPDX-License-Identifier: GPL-2.0-only
/*
 * Device memory accounting.  "used" is capacity taken by buffers (lazy ones
 * included: capacity is reserved at creation so that placement later cannot
 * fail for lack of it); "placed" is what has backing now.  An interleaved
 * buffer is spread page by page over the chiplets, leftover pages on chiplet 0.
 */
#include <linux/math64.h>

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
