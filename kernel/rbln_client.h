/* SPDX-License-Identifier: GPL-2.0-only */
/* One open file of a device: its jobs, its usage, and whether it holds the device. */
#ifndef RBLN_CLIENT_H
#define RBLN_CLIENT_H

#include <linux/atomic.h>
#include <linux/kref.h>
#include <linux/list.h>
#include <linux/mutex.h>
#include <linux/sched.h>
#include <linux/timekeeping.h>
#include <linux/uidgid.h>
#include <linux/wait.h>
#include <linux/xarray.h>
#include <drm/rbln_drm.h>

#include "rbln_hw.h"

struct drm_device;
struct drm_file;
struct drm_sched_entity;
struct pid;
struct rbln_device;
struct rbln_times;

/* The state of one open file; jobs keep it alive until they are done. */
struct rbln_client {
	struct kref ref;
	struct rbln_device *rdev;
	struct drm_file *file;
	u64 id;				/* drm-client-id where the kernel has one */
	struct list_head link;		/* in rdev->clients until its file starts closing */
	struct pid *creator;		/* thread group that opened the file */
	char creator_comm[TASK_COMM_LEN];
	kuid_t uid;
	atomic64_t last_active_ns;
	atomic64_t device_memory;	/* bytes of device memory its handles hold */
	atomic_t buffers;		/* buffer handles it holds (file_max_buffers) */
	atomic64_t buffer_bytes;	/* bytes of those buffers (file_max_bytes) */
	bool revoked;			/* reclaimed: rbln ioctls fail with -ENODEV
					 * (set under rdev->clients_lock) */

	/* Jobs (rbln_job.c). */
	struct mutex lock;		/* seqno and jobs */
	u64 last_seqno;			/* last issued; 0: none yet */
	struct xarray jobs;		/* seqno -> job, while running or failed-and-unwaited */
	atomic_t inflight;		/* queued or running */
	atomic_t tracked;		/* in jobs: inflight, or failed and not waited for */
	wait_queue_head_t idle;		/* inflight reached 0 */
	bool closing;			/* set under lock: no job starts any more */
	atomic64_t engine_busy_ns[DRM_RBLN_ENGINE_COUNT];
	struct rbln_times *times;	/* its jobs' device times, once it asked (rbln_times.c) */

	/*
	 * Its scheduler entities, one per engine it scheduled a job on
	 * (rbln_sched.c; rdev->entities_lock, made under client->lock too).
	 */
	struct drm_sched_entity *entities[RBLN_MAX_CHIPLETS][DRM_RBLN_ENGINE_COUNT];
	struct list_head entities_link;	/* in rdev->entity_clients while it has any */

	/* What a killed closer or revoker left: the drain and the rest after it. */
	struct work_struct close_work;
	struct work_struct revoke_work;
};

int rbln_client_open(struct drm_device *drm, struct drm_file *file);
/* The file's release has begun: no other file may reach this client now. */
void rbln_client_unlist(struct rbln_client *client);
void rbln_client_close(struct drm_device *drm, struct drm_file *file);
/* Revoked, as seen under clients_lock (ordered with the revocation's work). */
bool rbln_client_revoked(struct rbln_client *client);
/* -EBUSY while another file holds the device (ACQUIRE). */
int rbln_client_check_owner(struct rbln_client *client);
void rbln_client_put(struct rbln_client *client);
/*
 * Records activity, for LIST_CLIENTS' idle time (inline: every SUBMIT does).
 * Idle time is told in seconds: the tick's clock will do, and costs no clock read.
 */
static inline void rbln_client_touch(struct rbln_client *client)
{
	atomic64_set(&client->last_active_ns, ktime_get_coarse_ns());
}

int rbln_ioctl_acquire(struct drm_device *drm, void *data, struct drm_file *file);
int rbln_ioctl_release(struct drm_device *drm, void *data, struct drm_file *file);
/* LIST_CLIENTS' entries, gathered under clients_lock: see rbln_ioctl_list_clients(). */
u32 rbln_client_snapshot(struct rbln_device *rdev, struct rbln_client *caller,
			 struct drm_rbln_client *entries, u32 room);
int rbln_ioctl_list_clients(struct drm_device *drm, void *data, struct drm_file *file);
int rbln_ioctl_reclaim(struct drm_device *drm, void *data, struct drm_file *file);
int rbln_ioctl_reset(struct drm_device *drm, void *data, struct drm_file *file);

/* rbln_job.c: cancel queued jobs, wait for running ones, forget the rest. */
void rbln_client_drain_jobs(struct rbln_client *client);
/*
 * The same unless the caller is killed first: then -EINTR, no job starts any
 * more, and the caller hands the rest to a work item (rbln_jobs_queue_drain)
 * that calls rbln_client_drain_jobs(), so a killed task never waits for jobs.
 */
int rbln_client_drain_jobs_killable(struct rbln_client *client);
/* rbln_sched.c: its entity on @engine, made on first use (client->lock held). */
struct rbln_engine;
struct drm_sched_entity *rbln_client_entity(struct rbln_client *client,
					    struct rbln_engine *engine);
/* Its jobs drained: its entities go. */
void rbln_client_entities_fini(struct rbln_client *client);

#endif /* RBLN_CLIENT_H */
