/* SPDX-License-Identifier: GPL-2.0-only */
/* Device memory of buffers: the allocators per chiplet and their addresses (rbln_mem.c). */
#ifndef RBLN_MEM_H
#define RBLN_MEM_H

#include <linux/list.h>
#include <linux/types.h>

#include "rbln_hw.h"

struct rbln_device;

/* Windows of device addresses: one per chiplet, then the interleaved one. */
#define RBLN_MEM_WINDOWS	(RBLN_MAX_CHIPLETS + 1)

/* The device memory of one buffer. */
struct rbln_mem {
	u64 address;			/* where it starts in the device's addresses */
	struct list_head blocks[RBLN_MEM_WINDOWS];	/* from each window's allocator */
};

/* Sets up the allocators; they go with the DRM device.  The chiplets' memory_total must be set. */
int rbln_mem_init(struct rbln_device *rdev);

/*
 * @size bytes (page aligned) on @chiplet, or interleaved over all of them, at
 * one range of device addresses that no other buffer's overlaps.  -ENOSPC when
 * the allocator has no range (or share) that fits; then nothing is taken.
 * Sleeps.
 */
int rbln_mem_alloc(struct rbln_device *rdev, u32 chiplet, u64 size, struct rbln_mem *mem);
/* Gives back what rbln_mem_alloc() took. */
void rbln_mem_free(struct rbln_device *rdev, struct rbln_mem *mem);

#endif /* RBLN_MEM_H */
