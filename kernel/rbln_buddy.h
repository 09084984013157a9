/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The kernel's buddy allocator for device memory, under one name.  It is
 * gpu_buddy_* in vmlinux where the kernel has linux/gpu_buddy.h
 * (probes/gpu_buddy.c), else drm_buddy_* in drm_buddy.ko, whose older
 * interface has no contiguous mode and frees without flags.
 *
 * The caller serialises every call on one allocator.
 */
#ifndef RBLN_BUDDY_H
#define RBLN_BUDDY_H

#include <linux/list.h>
#include <linux/log2.h>

#ifdef RBLN_PROBE_GPU_BUDDY
#include <linux/gpu_buddy.h>

#define rbln_buddy		gpu_buddy
#define rbln_buddy_block	gpu_buddy_block
#define rbln_buddy_init		gpu_buddy_init
#define rbln_buddy_fini		gpu_buddy_fini
#define rbln_buddy_alloc_blocks	gpu_buddy_alloc_blocks
#define rbln_buddy_block_offset	gpu_buddy_block_offset

static inline void rbln_buddy_free_list(struct gpu_buddy *mm, struct list_head *blocks)
{
	gpu_buddy_free_list(mm, blocks, 0);
}

/* Lockdep checks the allocator's calls against the driver's lock (7.x). */
#ifdef gpu_buddy_driver_set_lock
#define rbln_buddy_set_lock(mm, lock)	gpu_buddy_driver_set_lock(mm, lock)
#else
#define rbln_buddy_set_lock(mm, lock)	do { } while (0)
#endif

#else /* drm_buddy.ko */
#include <drm/drm_buddy.h>

#define rbln_buddy		drm_buddy
#define rbln_buddy_block	drm_buddy_block
#define rbln_buddy_init		drm_buddy_init
#define rbln_buddy_fini		drm_buddy_fini
#define rbln_buddy_alloc_blocks	drm_buddy_alloc_blocks
#define rbln_buddy_block_offset	drm_buddy_block_offset
#define rbln_buddy_free_list	drm_buddy_free_list
#define rbln_buddy_set_lock(mm, lock)	do { } while (0)
#endif

/*
 * @size bytes at one address: @blocks are adjacent.  Without the allocator's
 * contiguous mode, a naturally aligned power-of-two block trimmed to @size; so
 * there a range fits only if that aligned block is free, where the contiguous
 * mode also finds unaligned runs.  -ENOSPC when no range fits.
 */
static inline int rbln_buddy_alloc_range(struct rbln_buddy *mm, u64 size,
					 struct list_head *blocks)
{
#ifdef RBLN_PROBE_GPU_BUDDY
	if (size > mm->avail)
		return -ENOSPC;
	return gpu_buddy_alloc_blocks(mm, 0, mm->size, size, mm->chunk_size, blocks,
				      GPU_BUDDY_CONTIGUOUS_ALLOCATION);
#else
	u64 block;
	int ret;

	if (size > mm->avail)
		return -ENOSPC;
	block = roundup_pow_of_two(size);
	if (block > mm->size)
		return -ENOSPC;
	ret = drm_buddy_alloc_blocks(mm, 0, mm->size, block, block, blocks, 0);
	if (ret)
		return ret;
	ret = drm_buddy_block_trim(mm, size, blocks);
	if (ret)
		drm_buddy_free_list(mm, blocks);
	return ret;
#endif
}

/* @size bytes in blocks anywhere (capacity, no address of its own). */
static inline int rbln_buddy_alloc_any(struct rbln_buddy *mm, u64 size,
				       struct list_head *blocks)
{
	if (size > mm->avail)
		return -ENOSPC;
	return rbln_buddy_alloc_blocks(mm, 0, mm->size, size, mm->chunk_size, blocks, 0);
}

/* Where the range of @blocks starts (they are not in address order). */
static inline u64 rbln_buddy_blocks_start(struct list_head *blocks)
{
	struct rbln_buddy_block *block;
	u64 start = U64_MAX;

	list_for_each_entry(block, blocks, link)
		start = min(start, rbln_buddy_block_offset(block));
	return start;
}

#endif /* RBLN_BUDDY_H */
