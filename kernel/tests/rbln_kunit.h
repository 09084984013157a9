/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * What the KUnit suites share, whatever backend made their devices (the
 * simulator, rbln_kunit_sim.h, or the fake one, rbln_fake_hw.h): open files
 * made in the kernel (mock_drm_getfile), and ioctls issued through the file's
 * real ioctl path with their arguments in user memory mapped for the test
 * (kunit_vm_mmap), so validation sees exactly what user space sends.
 */
#ifndef RBLN_KUNIT_H
#define RBLN_KUNIT_H

#include <kunit/test.h>
#include <linux/fs.h>

#include "../rbln_device.h"
#include "../rbln_client.h"
#include "../rbln_gem.h"
#include "../rbln_test_point.h"

/* drm_dev_put() of @rdev at the end of the test (which holds a reference). */
void rbln_test_hold_device(struct kunit *test, struct rbln_device *rdev);

/* An open file of @rdev, closed when the test ends. */
struct file *rbln_test_open(struct kunit *test, struct rbln_device *rdev);
/* Closes @file (opened elsewhere) when the test ends. */
void rbln_test_adopt(struct kunit *test, struct file *file);
/* Closes it now: the release path runs before this returns. */
void rbln_test_close(struct kunit *test, struct file *file);
struct rbln_client *rbln_test_client(struct file *file);

/* Zeroed user memory for this test. */
void __user *rbln_test_user(struct kunit *test, size_t size);
/* User memory holding a copy of @size bytes at @data. */
void __user *rbln_test_user_copy(struct kunit *test, const void *data, size_t size);
/* Copies @arg (the command's size) in and out of user memory around the ioctl. */
int rbln_test_ioctl(struct kunit *test, struct file *file, unsigned int cmd, void *arg);

/* Creates a buffer and returns its handle; fails the test if it cannot. */
u32 rbln_test_bo(struct kunit *test, struct file *file, u64 size, u32 chiplet, u32 flags);
/* The buffer behind @handle, placed, referenced until the test ends. */
struct rbln_bo *rbln_test_lookup(struct kunit *test, struct file *file, u32 handle);

/* RECLAIM of @victim's client by @caller with @flags; @freed (if not NULL) gets freed_bytes. */
int rbln_test_reclaim(struct kunit *test, struct file *caller, struct file *victim, u32 flags,
		      u64 *freed);

/* dma_fence_put() as a KUnit action. */
void rbln_test_put_fence(void *fence);
/* The fence WAIT waits on for job @seqno of @file (the scheduler's), held until the test ends. */
struct dma_fence *rbln_test_job_fence(struct kunit *test, struct file *file, u64 seqno);

/* Sets the test-point hook (rbln_test_point.h) for the rest of the test. */
void rbln_test_set_point_hook(struct kunit *test, int (*hook)(enum rbln_test_point_id point));

#endif /* RBLN_KUNIT_H */
