/* SPDX-License-Identifier: GPL-2.0-only */
/* Buffer objects: device memory placed on chiplets, and host buffers. */
#ifndef RBLN_GEM_H
#define RBLN_GEM_H

#include <linux/iosys-map.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <drm/drm_gem.h>

#include "rbln_mem.h"

struct rbln_device;

struct rbln_bo {
	struct drm_gem_object base;
	u32 flags;			/* DRM_RBLN_BO_EAGER, DRM_RBLN_BO_HOST */
	u32 chiplet;			/* index or DRM_RBLN_CHIPLET_INTERLEAVED */
	struct rbln_mem mem;		/* device memory, while accounted */
	struct mutex lock;		/* placement, revocation and CPU faults */
	void *vaddr;			/* backing, once placed */
	struct iosys_map import_map;	/* imported buffers: the exporter's vmap */
	struct sg_table *sgt;		/* imported buffers: the mapping to give back */
	bool accounted;			/* holds device memory (mem) */
	bool exported;			/* a dma-buf was made of it: never revoked */
	bool revoked;			/* reclaimed: no backing, CPU access faults */
	u64 client_id;			/* the client that created it */
	struct rbln_user *user;		/* made by BO_CREATE: charged to this user until freed */
	struct drm_file *charged_file;	/* BO_CREATE charged its file's limits before its first handle */
	struct list_head link;		/* in rdev->bos: every buffer made here, not imported */
};

static inline struct rbln_bo *to_rbln_bo(struct drm_gem_object *obj)
{
	return container_of(obj, struct rbln_bo, base);
}

static inline bool rbln_bo_is_host(const struct rbln_bo *bo)
{
	return bo->flags & DRM_RBLN_BO_HOST;
}

static inline bool rbln_bo_is_imported(const struct rbln_bo *bo)
{
	return bo->base.import_attach;
}

/* The device address of a buffer; 0 for host memory. */
u64 rbln_bo_device_address(const struct rbln_bo *bo);

/* True if @bo is device memory that lives (also) on @chiplet. */
bool rbln_bo_on_chiplet(const struct rbln_bo *bo, u32 chiplet);

/*
 * Takes the memory away from a buffer whose client is reclaimed: CPU
 * mappings are zapped, backing and accounting freed.  Returns the device
 * memory freed.  A buffer ever exported keeps its memory (importers and
 * dma-buf mappings reach it outside this device's files).
 */
u64 rbln_bo_revoke(struct rbln_bo *bo);

/* Gives @bo its backing if it has none yet: the lazy placement. */
int rbln_bo_place(struct rbln_bo *bo);
/* The pages of a placed, not imported @bo as a new sg table (sg_free_table + kfree). */
struct sg_table *rbln_bo_pages_sg(struct rbln_bo *bo);
/*
 * Bytes @offset..@offset + @size of a placed, not imported @bo as a new sg
 * table in segments of at most @max_segment bytes (sg_free_table + kfree):
 * what one copy of a job reaches, so a job maps no more than it moves.
 */
struct sg_table *rbln_bo_range_sg(struct rbln_bo *bo, u64 offset, u64 size,
				  unsigned int max_segment);

struct drm_gem_object *rbln_gem_prime_import_sg_table(struct drm_device *drm,
						      struct dma_buf_attachment *attach,
						      struct sg_table *sgt);

/* Device memory (rbln_mem.c), continued: backing placed or freed. */
void rbln_mem_placed(struct rbln_device *rdev, u32 chiplet, s64 delta);
/* Revokes the buffers only client @client_id holds; returns the bytes freed. */
u64 rbln_mem_revoke_client(struct rbln_device *rdev, u64 client_id);

#endif /* RBLN_GEM_H */
