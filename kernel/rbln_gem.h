/* SPDX-License-Identifier: GPL-2.0-only */
/* Buffer objects: device memory placed on chiplets, and host buffers. */
#ifndef RBLN_GEM_H
#define RBLN_GEM_H

#include <linux/list.h>
#include <linux/mutex.h>
#include <drm/drm_gem.h>

struct rbln_device;

struct rbln_bo {
	struct drm_gem_object base;
	u32 flags;			/* DRM_RBLN_BO_EAGER, DRM_RBLN_BO_HOST */
	u32 chiplet;			/* index or DRM_RBLN_CHIPLET_INTERLEAVED */
	u64 device_address;
	struct mutex lock;		/* placement */
	void *vaddr;			/* backing, once placed */
	struct page **pages;		/* imported buffers: the exporter's pages */
	struct sg_table *sgt;		/* imported buffers: the mapping to give back */
	bool accounted;			/* holds a capacity reservation */
	bool revoked;			/* reclaimed: no backing, CPU access faults */
	u64 client_id;			/* the client that created it */
	struct list_head link;		/* in rdev->bos, while it takes device memory */
};

static inline struct rbln_bo *to_rbln_bo(struct drm_gem_object *obj)
{
	return container_of(obj, struct rbln_bo, base);
}

static inline bool rbln_bo_is_host(const struct rbln_bo *bo)
{
	return bo->flags & DRM_RBLN_BO_HOST;
}

/* True if @bo is device memory that lives (also) on @chiplet. */
bool rbln_bo_on_chiplet(const struct rbln_bo *bo, u32 chiplet);

/*
 * Takes the memory away from a buffer whose client is reclaimed: CPU
 * mappings are zapped, backing and accounting freed.  Returns the device
 * memory freed.
 */
u64 rbln_bo_revoke(struct rbln_bo *bo);

/* Gives @bo its backing if it has none yet: the lazy placement. */
int rbln_bo_place(struct rbln_bo *bo);

struct drm_gem_object *rbln_gem_prime_import_sg_table(struct drm_device *drm,
						      struct dma_buf_attachment *attach,
						      struct sg_table *sgt);

/* Capacity accounting (rbln_mem.c). */
int rbln_mem_reserve(struct rbln_device *rdev, u32 chiplet, u64 size);
void rbln_mem_unreserve(struct rbln_device *rdev, u32 chiplet, u64 size);
void rbln_mem_placed(struct rbln_device *rdev, u32 chiplet, s64 delta);
/* Revokes the buffers only client @client_id holds; returns the bytes freed. */
u64 rbln_mem_revoke_client(struct rbln_device *rdev, u64 client_id);

#endif /* RBLN_GEM_H */
