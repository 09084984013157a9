/* SPDX-License-Identifier: GPL-2.0-only */
/* One open file of a device: its jobs, its usage, and whether it holds the device. */
#ifndef RBLN_CLIENT_H
#define RBLN_CLIENT_H

#include <linux/atomic.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/sched.h>
#include <linux/uidgid.h>
#include <linux/wait.h>
#include <linux/xarray.h>
#include <drm/rbln_drm.h>

struct drm_device;
struct drm_file;
struct pid;
struct rbln_device;

/* The state of one open file; jobs keep it alive until they are done. */
struct rbln_client {
	struct kref ref;
	struct rbln_device *rdev;
	struct drm_file *file;
	u64 id;				/* drm-client-id where the kernel has one */
	struct list_head link;		/* in rdev->clients */
	struct pid *creator;		/* thread group that opened the file */
	char creator_comm[TASK_COMM_LEN];
	kuid_t uid;
	atomic64_t last_active_ns;
	bool revoked;			/* reclaimed: rbln ioctls fail with -ENODEV */

	/* Jobs (rbln_job.c). */
	struct mutex lock;		/* seqno and jobs */
	u64 last_seqno;			/* last issued; 0: none yet */
	struct xarray jobs;		/* seqno -> job, while running or failed-and-unwaited */
	atomic_t inflight;
	wait_queue_head_t idle;		/* inflight reached 0 */
	bool closing;			/* queued jobs are cancelled, not run */
	atomic64_t engine_busy_ns[DRM_RBLN_ENGINE_COUNT];
};

int rbln_client_open(struct drm_device *drm, struct drm_file *file);
void rbln_client_close(struct drm_device *drm, struct drm_file *file);
void rbln_client_put(struct rbln_client *client);
/* Records activity, for LIST_CLIENTS' idle time. */
void rbln_client_touch(struct rbln_client *client);

int rbln_ioctl_acquire(struct drm_device *drm, void *data, struct drm_file *file);
int rbln_ioctl_release(struct drm_device *drm, void *data, struct drm_file *file);
int rbln_ioctl_list_clients(struct drm_device *drm, void *data, struct drm_file *file);
int rbln_ioctl_reclaim(struct drm_device *drm, void *data, struct drm_file *file);
int rbln_ioctl_reset(struct drm_device *drm, void *data, struct drm_file *file);

/* rbln_job.c: cancel queued jobs, wait for running ones, forget the rest. */
void rbln_client_drain_jobs(struct rbln_client *client);

#endif /* RBLN_CLIENT_H */
