// SPDX-License-Identifier: GPL-2.0-only
/*
 * Compiles iff the buddy allocator for device memory is the gpu_buddy one
 * (linux/gpu_buddy.h: contiguous allocations, free with flags); older kernels
 * have it as drm_buddy (drm/drm_buddy.h, drm_buddy.ko).
 */
#include <linux/gpu_buddy.h>
#include <linux/sizes.h>

int rbln_probe(struct gpu_buddy *mm, struct list_head *blocks);
int rbln_probe(struct gpu_buddy *mm, struct list_head *blocks)
{
	int ret = gpu_buddy_alloc_blocks(mm, 0, mm->size, SZ_4K, SZ_4K, blocks,
					 GPU_BUDDY_CONTIGUOUS_ALLOCATION);

	if (!ret)
		gpu_buddy_free_list(mm, blocks, 0);
	return ret;
}
