// SPDX-License-Identifier: GPL-2.0-only
/*
 * Buffer objects.  The backing of a buffer comes from the backend
 * (rbln_hw_mem_alloc), charged to the memory cgroup of the process that places it:
 * placed at creation (eager) or on first use (lazy: the first DMA job
 * touching it or the first CPU access through mmap).  CPU mappings are filled
 * page by page from a fault handler under the buffer's lock, so that a
 * revocation zaps every page that was ever mapped.
 *
 * Imported buffers (PRIME from another device) are reached through the
 * exporter's dma_buf_vmap() and mmap, never through its struct pages.
 *
 * What a user can make cheaply is bounded: a buffer's range of the device's
 * mmap offsets (shared by every file, about 1 TiB) is taken only when it is
 * first asked for (BO_INFO) or exported, so lazy buffers nobody maps do not
 * use it up; every file holds at most file_max_buffers handles and
 * file_max_bytes of buffers, and every user at most user_max_buffers buffers
 * and user_max_bytes of them, exported ones included (rbln_user.c); and the
 * structs behind them are charged to the creator's memory cgroup, which fails
 * them with -ENOMEM rather than invoking its OOM killer.
 */
#include <linux/cred.h>
#include <linux/dma-buf.h>
#include <linux/iosys-map.h>
#include <linux/mm.h>
#include <linux/moduleparam.h>
#include <linux/scatterlist.h>
#include <linux/sizes.h>
#include <linux/slab.h>
#include <drm/drm_drv.h>
#include <drm/drm_file.h>
#include <drm/drm_prime.h>
#include <drm/drm_vma_manager.h>

#include "rbln_client.h"
#include "rbln_compat.h"
#include "rbln_device.h"
#include "rbln_gem.h"
#include "rbln_test_point.h"
#include "rbln_user.h"

static unsigned int file_max_buffers = 65536;
module_param(file_max_buffers, uint, 0644);
MODULE_PARM_DESC(file_max_buffers,
	"Buffer handles one open file may hold; more fail with EMFILE (default 65536)");

static unsigned long file_max_bytes = 256 * (unsigned long)SZ_1G;
module_param(file_max_bytes, ulong, 0644);
MODULE_PARM_DESC(file_max_bytes,
	"Bytes of buffers, device and host memory, one open file may hold; more fail with EDQUOT (default 256 GiB)");

bool rbln_bo_on_chiplet(const struct rbln_bo *bo, u32 chiplet)
{
	if (rbln_bo_is_host(bo))
		return false;
	return bo->chiplet == DRM_RBLN_CHIPLET_INTERLEAVED || bo->chiplet == chiplet;
}

static struct rbln_device *bo_rdev(const struct rbln_bo *bo)
{
	return to_rbln_device(bo->base.dev);
}

u64 rbln_bo_device_address(const struct rbln_bo *bo)
{
	return rbln_bo_is_host(bo) ? 0 : bo->mem.address;
}

int rbln_bo_place(struct rbln_bo *bo)
{
	struct rbln_device *rdev = bo_rdev(bo);
	void *vaddr;
	int ret = 0;

	/*
	 * Placed already, the case of nearly every job: no lock.  vaddr only
	 * goes from NULL to set, and back only after revoked is set, so what
	 * this sees was true at some moment, as the locked check's result is
	 * once the lock is dropped: a reclaim may come after either.  SUBMIT
	 * looks at vaddr again (rbln_job_hw_buffers()), a fault takes the
	 * lock, and an exported buffer is never revoked.  The acquire pairs
	 * with the release below: the zeroed bytes are seen with the address.
	 */
	if (smp_load_acquire(&bo->vaddr) && !READ_ONCE(bo->revoked))
		return 0;
	mutex_lock(&bo->lock);
	if (bo->revoked) {
		ret = -ENODEV;
	} else if (!bo->vaddr) {
		/* Zeroed, like fresh device memory, and charged to the caller. */
		vaddr = rbln_hw_mem_alloc(rdev, rbln_bo_is_host(bo) ? RBLN_HW_HOST_MEMORY :
					  bo->chiplet, rbln_bo_device_address(bo), bo->base.size);
		if (!vaddr)
			ret = -ENOMEM;
		else if (bo->accounted)
			rbln_mem_placed(rdev, bo->chiplet, bo->base.size);
		smp_store_release(&bo->vaddr, vaddr);
	}
	mutex_unlock(&bo->lock);
	return ret;
}

u64 rbln_bo_revoke(struct rbln_bo *bo)
{
	struct rbln_device *rdev = bo_rdev(bo);
	u64 freed = 0;

	mutex_lock(&bo->lock);
	if (bo->exported) {
		mutex_unlock(&bo->lock);
		return 0;
	}
	WRITE_ONCE(bo->revoked, true);	/* before vaddr goes: see rbln_bo_place() */
	/* Faults take the lock too: no page can be mapped after this. */
	drm_vma_node_unmap(&bo->base.vma_node, bo->base.dev->anon_inode->i_mapping);
	if (bo->vaddr && !rbln_bo_is_imported(bo)) {
		rbln_hw_mem_free(rdev, bo->vaddr);
		WRITE_ONCE(bo->vaddr, NULL);
		if (bo->accounted)
			rbln_mem_placed(rdev, bo->chiplet, -(s64)bo->base.size);
	}
	if (bo->accounted) {
		rbln_mem_free(rdev, &bo->mem);
		bo->accounted = false;
		freed = bo->base.size;
	}
	mutex_unlock(&bo->lock);
	return freed;
}

static void rbln_bo_free(struct drm_gem_object *obj)
{
	struct rbln_bo *bo = to_rbln_bo(obj);
	struct rbln_device *rdev = bo_rdev(bo);

	if (rbln_bo_is_imported(bo)) {
		rbln_dma_buf_vunmap(obj->import_attach->dmabuf, &bo->import_map);
		drm_prime_gem_destroy(obj, bo->sgt);
	} else if (bo->vaddr) {
		rbln_hw_mem_free(rdev, bo->vaddr);
		if (bo->accounted)
			rbln_mem_placed(rdev, bo->chiplet, -(s64)obj->size);
	}
	if (bo->accounted)
		rbln_mem_free(rdev, &bo->mem);
	if (!list_empty(&bo->link)) {
		mutex_lock(&rdev->bos_lock);
		list_del(&bo->link);
		mutex_unlock(&rdev->bos_lock);
	}
	if (bo->user)
		rbln_user_uncharge(bo->user, obj->size);
	drm_gem_object_release(obj);
	mutex_destroy(&bo->lock);
	kfree(bo);
}

static vm_fault_t rbln_bo_fault(struct vm_fault *vmf)
{
	struct vm_area_struct *vma = vmf->vma;
	struct rbln_bo *bo = to_rbln_bo(vma->vm_private_data);
	struct rbln_device *rdev = bo_rdev(bo);
	/* vm_pgoff holds the fake offset, through the device file or a dma-buf. */
	u64 offset = (u64)(vmf->pgoff - drm_vma_node_start(&bo->base.vma_node)) << PAGE_SHIFT;
	vm_fault_t ret;

	/*
	 * The page is mapped before the lock is dropped: a revocation, which
	 * takes the lock to zap the mappings and free the backing, either
	 * comes first (and this fault fails) or sees the page and zaps it.
	 */
	int idx;

	/* A removed device's memory is no longer the backend's to give. */
	if (!drm_dev_enter(&rdev->drm, &idx))
		return VM_FAULT_SIGBUS;
	mutex_lock(&bo->lock);
	if (!bo->vaddr || offset >= bo->base.size) {
		ret = VM_FAULT_SIGBUS;
	} else {
		unsigned long pfn = page_to_pfn(rbln_hw_mem_page(rdev, bo->vaddr, offset));

		rbln_test_point(RBLN_TP_FAULT_FOUND);
		ret = vmf_insert_pfn(vma, vmf->address, pfn);
	}
	mutex_unlock(&bo->lock);
	drm_dev_exit(idx);
	return ret;
}

static const struct vm_operations_struct rbln_bo_vm_ops = {
	.fault = rbln_bo_fault,
	.open = drm_gem_vm_open,
	.close = drm_gem_vm_close,
};

/*
 * CPU access needs backing: mapping a lazy buffer places it.  The pages are
 * inserted by the fault handler as raw PFNs, so no page reference outlives a
 * revocation.  An imported buffer is mapped by its exporter.
 */
static int rbln_bo_mmap(struct drm_gem_object *obj, struct vm_area_struct *vma)
{
	struct rbln_bo *bo = to_rbln_bo(obj);
	int ret;

	if (!(vma->vm_flags & VM_SHARED))
		return -EINVAL;
	if (rbln_bo_is_imported(bo)) {
		/* Not ours: an exporter without vm_ops must not get drm_gem_vm_close(). */
		vma->vm_ops = NULL;
		vma->vm_private_data = NULL;
		ret = dma_buf_mmap(obj->import_attach->dmabuf, vma, 0);
		/* The exporter's mapping holds its buffer: drop drm_gem_mmap_obj()'s reference. */
		if (!ret)
			drm_gem_object_put(obj);
		return ret;
	}
	ret = rbln_bo_place(bo);
	if (ret)
		return ret;
	rbln_vm_flags_set(vma, VM_PFNMAP | VM_DONTEXPAND | VM_DONTDUMP);
	return 0;
}

struct sg_table *rbln_bo_pages_sg(struct rbln_bo *bo)
{
	struct rbln_device *rdev = bo_rdev(bo);
	unsigned int i, n = bo->base.size >> PAGE_SHIFT;
	struct sg_table *sgt;
	struct page **pages;

	pages = kvmalloc_array(n, sizeof(*pages), GFP_KERNEL_ACCOUNT);
	if (!pages)
		return ERR_PTR(-ENOMEM);
	for (i = 0; i < n; i++)
		pages[i] = rbln_hw_mem_page(rdev, bo->vaddr, (size_t)i << PAGE_SHIFT);
	sgt = drm_prime_pages_to_sg(bo->base.dev, pages, n);
	kvfree(pages);
	return sgt;
}

struct sg_table *rbln_bo_range_sg(struct rbln_bo *bo, u64 offset, u64 size,
				  unsigned int max_segment)
{
	struct rbln_device *rdev = bo_rdev(bo);
	u64 first = offset >> PAGE_SHIFT;
	unsigned int i, n = (offset_in_page(offset) + size + PAGE_SIZE - 1) >> PAGE_SHIFT;
	struct sg_table *sgt;
	struct page **pages;
	int ret;

	if (WARN_ON_ONCE(!size || offset + size > bo->base.size))
		return ERR_PTR(-EINVAL);
	pages = kvmalloc_array(n, sizeof(*pages), GFP_KERNEL_ACCOUNT);
	sgt = kzalloc(sizeof(*sgt), GFP_KERNEL_ACCOUNT);
	if (!pages || !sgt) {
		ret = -ENOMEM;
		goto err;
	}
	for (i = 0; i < n; i++)
		pages[i] = rbln_hw_mem_page(rdev, bo->vaddr, (size_t)(first + i) << PAGE_SHIFT);
	/* Exactly the bytes asked for: a bounce buffer copies back no others. */
	ret = sg_alloc_table_from_pages_segment(sgt, pages, n, offset_in_page(offset), size,
						max_segment, GFP_KERNEL_ACCOUNT);
	if (ret)
		goto err;
	kvfree(pages);
	return sgt;

err:
	kfree(sgt);
	kvfree(pages);
	return ERR_PTR(ret);
}

static struct sg_table *rbln_bo_get_sg_table(struct drm_gem_object *obj)
{
	struct rbln_bo *bo = to_rbln_bo(obj);
	struct sg_table *sgt;
	int ret, idx;

	if (!drm_dev_enter(obj->dev, &idx))
		return ERR_PTR(-ENODEV);
	ret = rbln_bo_place(bo);
	sgt = ret ? ERR_PTR(ret) : rbln_bo_pages_sg(bo);
	drm_dev_exit(idx);
	return sgt;
}

static int rbln_bo_vmap(struct drm_gem_object *obj, struct iosys_map *map)
{
	struct rbln_bo *bo = to_rbln_bo(obj);
	void *vaddr = smp_load_acquire(&bo->vaddr);	/* see rbln_bo_place() */
	int ret, idx;

	/*
	 * An exported buffer is never revoked: once placed, its bytes stay
	 * until its last reference, and mapping them needs no device.  So an
	 * importer holding a placed buffer is not failed by a removal racing
	 * it (inside dma_buf_vmap(), which WARNs on a failure).
	 */
	if (READ_ONCE(bo->exported) && vaddr) {
		iosys_map_set_vaddr(map, vaddr);
		return 0;
	}
	if (!drm_dev_enter(obj->dev, &idx))
		return -ENODEV;
	ret = rbln_bo_place(bo);
	if (!ret)
		iosys_map_set_vaddr(map, bo->vaddr);
	drm_dev_exit(idx);
	return ret;
}

#if RBLN_HAVE_DRM_FDINFO
static enum drm_gem_object_status rbln_bo_status(struct drm_gem_object *obj)
{
	return READ_ONCE(to_rbln_bo(obj)->vaddr) ? DRM_GEM_OBJECT_RESIDENT : 0;
}
#endif

/* Exported once, a buffer is never revoked: see rbln_bo_revoke(). */
static struct dma_buf *rbln_bo_export(struct drm_gem_object *obj, int flags)
{
	struct rbln_bo *bo = to_rbln_bo(obj);
	/*
	 * A dma-buf's mmap adds the buffer's offset to the mapping, and faults
	 * take it off: it must exist first and never change.
	 */
	int ret = drm_gem_create_mmap_offset(obj);

	if (ret)
		return ERR_PTR(ret);
	mutex_lock(&bo->lock);
	bo->exported = true;
	mutex_unlock(&bo->lock);
	return drm_gem_prime_export(obj, flags);
}

/* A handle of @size bytes within the file's limits, or the errno that refuses it. */
static int rbln_client_charge_handle(struct rbln_client *client, u64 size)
{
	if (atomic_inc_return(&client->buffers) > READ_ONCE(file_max_buffers)) {
		atomic_dec(&client->buffers);
		return -EMFILE;
	}
	if (atomic64_add_return(size, &client->buffer_bytes) > READ_ONCE(file_max_bytes)) {
		atomic64_sub(size, &client->buffer_bytes);
		atomic_dec(&client->buffers);
		return -EDQUOT;
	}
	return 0;
}

static void rbln_client_uncharge_handle(struct rbln_client *client, u64 size)
{
	atomic64_sub(size, &client->buffer_bytes);
	atomic_dec(&client->buffers);
}

/*
 * Every handle a file gets (BO_CREATE, a PRIME import) comes through here:
 * the file's limits (charged before anything else by BO_CREATE, so that a
 * refused create reserves and places nothing), and the device memory it
 * holds for LIST_CLIENTS.
 */
static int rbln_bo_open(struct drm_gem_object *obj, struct drm_file *file)
{
	struct rbln_client *client = file->driver_priv;
	struct rbln_bo *bo = to_rbln_bo(obj);
	int ret;

	if (bo->charged_file == file) {
		bo->charged_file = NULL;	/* its creator's first handle */
	} else {
		ret = rbln_client_charge_handle(client, obj->size);
		if (ret)
			return ret;
	}
	if (!rbln_bo_is_host(bo))
		atomic64_add(obj->size, &client->device_memory);
	return 0;
}

static void rbln_bo_close(struct drm_gem_object *obj, struct drm_file *file)
{
	struct rbln_client *client = file->driver_priv;

	if (!rbln_bo_is_host(to_rbln_bo(obj)))
		atomic64_sub(obj->size, &client->device_memory);
	rbln_client_uncharge_handle(client, obj->size);
	rbln_test_point(RBLN_TP_HANDLE_CLOSED);
}

static const struct drm_gem_object_funcs rbln_bo_funcs = {
#if RBLN_HAVE_DRM_FDINFO
	.status = rbln_bo_status,
#endif
	.open = rbln_bo_open,
	.close = rbln_bo_close,
	.export = rbln_bo_export,
	.free = rbln_bo_free,
	.mmap = rbln_bo_mmap,
	.get_sg_table = rbln_bo_get_sg_table,
	.vmap = rbln_bo_vmap,
	.vm_ops = &rbln_bo_vm_ops,
};

/* Its mmap offset comes later (see the top). */
static struct rbln_bo *rbln_bo_alloc(struct drm_device *drm, u64 size, u32 flags, u32 chiplet)
{
	struct rbln_bo *bo;

	/* Charged to the caller; a full cgroup fails it instead of killing for it. */
	bo = kzalloc(sizeof(*bo), GFP_KERNEL_ACCOUNT | __GFP_RETRY_MAYFAIL);
	if (!bo)
		return ERR_PTR(-ENOMEM);
	bo->flags = flags;
	bo->chiplet = chiplet;
	INIT_LIST_HEAD(&bo->link);
	mutex_init(&bo->lock);
	bo->base.funcs = &rbln_bo_funcs;
	drm_gem_private_object_init(drm, &bo->base, size);
	return bo;
}

/* Device memory on the chiplet(s), with its range of addresses. */
static int rbln_bo_reserve(struct rbln_bo *bo)
{
	int ret = rbln_mem_alloc(bo_rdev(bo), bo->chiplet, bo->base.size, &bo->mem);

	if (ret)
		return ret;
	bo->accounted = true;	/* from here on, freeing the buffer frees its memory */
	return 0;
}

int rbln_ioctl_bo_create(struct drm_device *drm, void *data, struct drm_file *file)
{
	struct rbln_device *rdev = to_rbln_device(drm);
	struct rbln_client *client = file->driver_priv;
	struct drm_rbln_bo_create *args = data;
	bool host = args->flags & DRM_RBLN_BO_HOST;
	struct rbln_user *user;
	struct rbln_bo *bo;
	u64 size;
	int ret;

	if (args->flags & ~DRM_RBLN_BO_CREATE_FLAGS || args->reserved || !args->size ||
	    args->size > U64_MAX - PAGE_SIZE)
		return -EINVAL;
	size = PAGE_ALIGN(args->size);
	if (host && args->chiplet)
		return -EINVAL;
	if (host && size > DRM_RBLN_HOST_BO_MAX)
		return -E2BIG;
	if (!host && args->chiplet >= rdev->nr_chiplets &&
	    args->chiplet != DRM_RBLN_CHIPLET_INTERLEAVED)
		return -EINVAL;
	ret = rbln_client_check_owner(client) ?: rbln_client_charge_handle(client, size);
	if (ret)
		return ret;
	user = rbln_user_charge(rbln_user_accountable(current_cred()), size);
	if (IS_ERR(user)) {
		rbln_client_uncharge_handle(client, size);
		return PTR_ERR(user);
	}

	bo = rbln_bo_alloc(drm, size, args->flags, args->chiplet);
	if (IS_ERR(bo)) {
		rbln_user_uncharge(user, size);
		rbln_client_uncharge_handle(client, size);
		return PTR_ERR(bo);
	}
	bo->user = user;	/* rbln_bo_free() gives it back */
	bo->client_id = client->id;
	bo->charged_file = file;	/* rbln_bo_open() takes it over */
	ret = host ? 0 : rbln_bo_reserve(bo);
	if (ret) {
		rbln_client_uncharge_handle(client, size);
		drm_gem_object_put(&bo->base);
		return ret;
	}
	/* Listed, so that a reclaim of this client finds it. */
	mutex_lock(&rdev->bos_lock);
	list_add_tail(&bo->link, &rdev->bos);
	mutex_unlock(&rdev->bos_lock);

	rbln_client_touch(client);
	ret = args->flags & DRM_RBLN_BO_EAGER ? rbln_bo_place(bo) : 0;
	if (!ret)
		ret = drm_gem_handle_create(file, &bo->base, &args->handle);
	/* No handle made (rbln_bo_open() not reached): its charge goes back here. */
	if (ret && bo->charged_file)
		rbln_client_uncharge_handle(client, size);
	drm_gem_object_put(&bo->base);
	/* A revocation that ran meanwhile deleted the handles it could see. */
	if (!ret && rbln_client_revoked(client)) {
		drm_gem_handle_delete(file, args->handle);
		ret = -ENODEV;
	}
	return ret;
}

int rbln_ioctl_bo_info(struct drm_device *drm, void *data, struct drm_file *file)
{
	struct drm_rbln_bo_info *args = data;
	struct drm_gem_object *obj;
	struct rbln_bo *bo;
	int ret;

	if (args->flags || args->reserved)
		return -EINVAL;
	obj = drm_gem_object_lookup(file, args->handle);
	if (!obj)
		return -ENOENT;
	/* The first ask takes its range of mmap offsets; later ones find it. */
	ret = drm_gem_create_mmap_offset(obj);
	if (ret) {
		drm_gem_object_put(obj);
		return ret;
	}
	bo = to_rbln_bo(obj);
	args->flags = bo->flags | (READ_ONCE(bo->vaddr) ? DRM_RBLN_BO_PLACED : 0);
	args->size = obj->size;
	args->device_address = rbln_bo_device_address(bo);
	args->mmap_offset = drm_vma_node_offset_addr(&obj->vma_node);
	args->chiplet = bo->chiplet;
	drm_gem_object_put(obj);
	return 0;
}

/*
 * The kernel mapping of an imported buffer.  dma_buf_vmap() warns when the
 * exporter's vmap fails, and an rbln exporter's fails when its device went
 * away after the import got the buffer's pages (a removal racing the import:
 * the storm's chaos did it): a WARN any user could cause.  For a buffer of
 * another rbln device the import holds that device for the vmap and places
 * the buffer first, so the vmap cannot fail and a removed device is a plain
 * ENODEV here.  Backends map dma-bufs through it too (rbln_hw.h).
 */
int rbln_hw_dmabuf_vmap(struct dma_buf *dmabuf, struct iosys_map *map)
{
	struct drm_gem_object *obj = dmabuf->priv;	/* a GEM object where DRM exported it */
	int ret, idx;

	if (dmabuf->ops->vmap != drm_gem_dmabuf_vmap || obj->funcs != &rbln_bo_funcs)
		return rbln_dma_buf_vmap(dmabuf, map);
	if (!drm_dev_enter(obj->dev, &idx))
		return -ENODEV;
	ret = rbln_bo_place(to_rbln_bo(obj));
	if (!ret)
		ret = rbln_dma_buf_vmap(dmabuf, map);
	drm_dev_exit(idx);
	return ret;
}

/*
 * A buffer exported by another device: host memory to this one, reachable by
 * External HDMA, taking none of this device's capacity.  Its bytes are
 * reached through the exporter's kernel mapping, which works for exporters
 * without struct pages too.
 */
struct drm_gem_object *rbln_gem_prime_import_sg_table(struct drm_device *drm,
						      struct dma_buf_attachment *attach,
						      struct sg_table *sgt)
{
	struct rbln_bo *bo;
	int ret;

	bo = rbln_bo_alloc(drm, attach->dmabuf->size, DRM_RBLN_BO_HOST, 0);
	if (IS_ERR(bo))
		return ERR_CAST(bo);
	ret = rbln_hw_dmabuf_vmap(attach->dmabuf, &bo->import_map);
	if (ret) {
		drm_gem_object_put(&bo->base);
		return ERR_PTR(ret);
	}
	if (bo->import_map.is_iomem) {		/* the engines copy with the CPU */
		rbln_dma_buf_vunmap(attach->dmabuf, &bo->import_map);
		drm_gem_object_put(&bo->base);
		return ERR_PTR(-EOPNOTSUPP);
	}
	bo->vaddr = bo->import_map.vaddr;
	bo->base.import_attach = attach;
	bo->sgt = sgt;		/* unmapped by drm_prime_gem_destroy() at free */
	return &bo->base;
}
