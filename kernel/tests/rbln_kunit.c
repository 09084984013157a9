// SPDX-License-Identifier: GPL-2.0-only
/* Helpers of the KUnit suites, whatever the backend; see rbln_kunit.h. */
#include <kunit/resource.h>
#include <linux/atomic.h>
#include <linux/dma-fence.h>
#include <linux/file.h>
#include <linux/mman.h>
#include <linux/uaccess.h>
#include <drm/drm_drv.h>
#include <drm/drm_file.h>
#include <drm/drm_gem.h>
#include <drm/drm_ioctl.h>

#include "../rbln_client.h"
#include "../rbln_gem.h"
#include "../rbln_job.h"
#include "rbln_kunit.h"

static void rbln_test_put_device(void *rdev)
{
	drm_dev_put(&((struct rbln_device *)rdev)->drm);
}

void rbln_test_hold_device(struct kunit *test, struct rbln_device *rdev)
{
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, rbln_test_put_device, rdev), 0);
}

/* fput() from a kernel thread is deferred; the tests need the release done. */
static void rbln_test_close_action(void *file)
{
	fput(file);
	flush_delayed_fput();
}

struct file *rbln_test_open(struct kunit *test, struct rbln_device *rdev)
{
	struct drm_minor *minor = rdev->drm.accel ? rdev->drm.accel : rdev->drm.render;
	struct file *file;

	file = mock_drm_getfile(minor, O_RDWR);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, file);
	rbln_test_adopt(test, file);
	return file;
}

void rbln_test_adopt(struct kunit *test, struct file *file)
{
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, rbln_test_close_action, file), 0);
}

void rbln_test_close(struct kunit *test, struct file *file)
{
	kunit_release_action(test, rbln_test_close_action, file);
}

struct rbln_client *rbln_test_client(struct file *file)
{
	struct drm_file *dfile = file->private_data;

	return dfile->driver_priv;
}

void __user *rbln_test_user(struct kunit *test, size_t size)
{
	unsigned long addr;

	addr = kunit_vm_mmap(test, NULL, 0, PAGE_ALIGN(size), PROT_READ | PROT_WRITE,
			     MAP_ANONYMOUS | MAP_PRIVATE, 0);
	KUNIT_ASSERT_NE_MSG(test, addr, 0, "kunit_vm_mmap of %zu bytes", size);
	return (void __user *)addr;
}

void __user *rbln_test_user_copy(struct kunit *test, const void *data, size_t size)
{
	void __user *u = rbln_test_user(test, size);

	KUNIT_ASSERT_EQ(test, copy_to_user(u, data, size), 0);
	return u;
}

int rbln_test_ioctl(struct kunit *test, struct file *file, unsigned int cmd, void *arg)
{
	size_t size = _IOC_SIZE(cmd);
	void __user *uarg = rbln_test_user_copy(test, arg, size);
	long ret;

	ret = file->f_op->unlocked_ioctl(file, cmd, (unsigned long)uarg);
	KUNIT_ASSERT_EQ(test, copy_from_user(arg, uarg, size), 0);
	return ret;
}

u32 rbln_test_bo(struct kunit *test, struct file *file, u64 size, u32 chiplet, u32 flags)
{
	struct drm_rbln_bo_create args = { .size = size, .chiplet = chiplet, .flags = flags };

	KUNIT_ASSERT_EQ_MSG(test, rbln_test_ioctl(test, file, DRM_IOCTL_RBLN_BO_CREATE, &args), 0,
			    "BO_CREATE size %llu chiplet %u flags %#x", size, chiplet, flags);
	return args.handle;
}

static void rbln_test_put_bo(void *obj)
{
	drm_gem_object_put(obj);
}

struct rbln_bo *rbln_test_lookup(struct kunit *test, struct file *file, u32 handle)
{
	struct drm_gem_object *obj = drm_gem_object_lookup(file->private_data, handle);

	KUNIT_ASSERT_NOT_NULL(test, obj);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, rbln_test_put_bo, obj), 0);
	KUNIT_ASSERT_EQ(test, rbln_bo_place(to_rbln_bo(obj)), 0);
	return to_rbln_bo(obj);
}

int rbln_test_reclaim(struct kunit *test, struct file *caller, struct file *victim, u32 flags,
		      u64 *freed)
{
	struct drm_rbln_reclaim r = { .client_id = rbln_test_client(victim)->id, .flags = flags };
	int ret = rbln_test_ioctl(test, caller, DRM_IOCTL_RBLN_RECLAIM, &r);

	if (freed)
		*freed = r.freed_bytes;
	return ret;
}

void rbln_test_put_fence(void *fence)
{
	dma_fence_put(fence);
}

struct dma_fence *rbln_test_job_fence(struct kunit *test, struct file *file, u64 seqno)
{
	struct rbln_client *client = rbln_test_client(file);
	struct dma_fence *fence = NULL;
	struct rbln_job *job;

	mutex_lock(&client->lock);
	job = xa_load(&client->jobs, seqno);
	if (job)
		fence = dma_fence_get(job->done);
	mutex_unlock(&client->lock);
	KUNIT_ASSERT_NOT_NULL_MSG(test, fence, "job %llu is not kept for WAIT", seqno);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, rbln_test_put_fence, fence), 0);
	return fence;
}

static void rbln_test_clear_point_hook(void *unused)
{
	WRITE_ONCE(rbln_test_point_hook, NULL);
}

void rbln_test_set_point_hook(struct kunit *test, int (*hook)(enum rbln_test_point_id point))
{
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, rbln_test_clear_point_hook, NULL), 0);
	WRITE_ONCE(rbln_test_point_hook, hook);
}
