/* SPDX-License-Identifier: GPL-2.0-only */
/* DMA jobs: per-file clients, per-engine queues, submit and wait. */
#ifndef RBLN_JOB_H
#define RBLN_JOB_H

#include <linux/atomic.h>
#include <linux/kref.h>
#include <linux/mutex.h>
#include <linux/wait.h>
#include <linux/xarray.h>

struct drm_device;
struct drm_file;
struct rbln_device;
struct rbln_chiplet;

/* The state of one open file; jobs keep it alive until they are done. */
struct rbln_client {
	struct kref ref;
	struct rbln_device *rdev;
	u64 id;				/* drm-client-id where the kernel has one */
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

/* Engine queues of a device: created with it, drained when it goes away. */
int rbln_engines_init(struct rbln_device *rdev);
void rbln_engines_fini(struct rbln_device *rdev);
/* Wakes jobs waiting on a hung engine so they can see a state change. */
void rbln_engines_kick(struct rbln_device *rdev);

/* rbln_usage.c */
struct drm_printer;
int rbln_ioctl_client_usage(struct drm_device *drm, void *data, struct drm_file *file);
void rbln_show_fdinfo(struct drm_printer *p, struct drm_file *file);

int rbln_ioctl_submit(struct drm_device *drm, void *data, struct drm_file *file);
int rbln_ioctl_wait(struct drm_device *drm, void *data, struct drm_file *file);

#endif /* RBLN_JOB_H */
