/* SPDX-License-Identifier: GPL-2.0-only */
/* DMA jobs: per-file clients, per-engine schedulers, submit and wait. */
#ifndef RBLN_JOB_H
#define RBLN_JOB_H

#include <linux/completion.h>
#include <linux/kref.h>
#include <drm/gpu_scheduler.h>

#include "rbln_client.h"
#include "rbln_hw.h"

struct dma_fence;
struct drm_device;
struct drm_file;
struct rbln_device;
struct rbln_chiplet;
struct rbln_engine;

/*
 * A job: copies run by one engine of one chiplet.  Scheduled jobs go through
 * the engine's DRM GPU scheduler; direct ones run inside SUBMIT.
 */
struct rbln_job {
	struct drm_sched_job base;	/* scheduled jobs only */
	struct kref ref;
	struct rbln_hw_job hw;		/* what the backend sees */
	struct rbln_client *client;
	struct rbln_engine *engine;
	u64 seqno;
	struct drm_rbln_copy *copies;
	struct rbln_bo **bos;		/* src and dst of each copy, referenced */
	struct rbln_hw_buffer *bufs;	/* the same, as the backend reaches them */
	struct device *dma_dev;		/* what bufs[].sgt are mapped for, referenced */
	u32 dma_mapped;			/* bufs[0 .. dma_mapped - 1].sgt are mapped now */
	/* Where a one-copy job keeps them: the common job allocates once. */
	struct drm_rbln_copy copy_inline;
	struct rbln_bo *bos_inline[2];
	struct rbln_hw_buffer bufs_inline[2];
	char label[DRM_RBLN_LABEL_MAX];
	struct dma_fence *done;		/* signalled once it ended; NULL for a direct success */
	struct dma_fence *hw_fence;	/* scheduled jobs: what run_job returned */
	struct rbln_fence *spare_fence;	/* allocated at submit, started by run_job */
	struct dma_fence **deps;	/* fences it waits for, for their errors */
	u32 nr_deps;
	struct rbln_sync_trace *trace_waits;	/* its in_syncs, only while rbln_job_wait is traced */
	u32 nr_trace_waits;
	bool scheduled;			/* base was initialised */
	bool started;			/* given to the engine: busy time runs */
	/*
	 * Begun inside SUBMIT, it yielded its engine part way: its rest is
	 * scheduled, and it counts as running (a close lets it finish).
	 */
	bool ran_part;
	bool timed_out;			/* ended by the timeout handler */
	bool want_times;		/* DRM_RBLN_SUBMIT_TIMES: its times when it ends */
	unsigned long ended;		/* bit 0: ended, exactly once */
	int status;
	u64 start_ns;
	u64 submit_ns;			/* want_times only */
	u64 end_ns;			/* want_times, or it ran */
	unsigned long yield_at;		/* direct jobs: jiffies when its slice ends */
	struct work_struct end_work;	/* what its end does outside the signalling path */
	struct work_struct free_work;	/* scheduled jobs: free_job's part, in rbln_job_wq */
	struct completion end_done;	/* buffers and bookkeeping done (WAIT waits for it) */
};

/* The jobs' workqueue, made at module load and drained at unload. */
int rbln_jobs_init(void);
void rbln_jobs_fini(void);
void rbln_jobs_queue_work(struct work_struct *work);
/* A drain handed over by a killed task (rbln_client_drain_jobs_killable()). */
void rbln_jobs_queue_drain(struct work_struct *work);

void rbln_job_put(struct rbln_job *job);
/* Given to the engine: busy time and the start tracepoint. */
void rbln_job_begin(struct rbln_job *job);
/* Claims the job's end; false if someone else ended it already. */
bool rbln_job_claim_end(struct rbln_job *job);
/*
 * Ends a claimed scheduled job with @status: accounting, then its fences are
 * signalled.  The fence-signalling path: it takes no lock and allocates
 * nothing; its buffers and the file's bookkeeping follow in a work item.
 */
void rbln_job_end(struct rbln_job *job, int status);
/*
 * After a wait on its fence: returns once the job's buffers and bookkeeping
 * are done.  The caller holds a reference of its own.
 */
void rbln_job_flush_end(struct rbln_job *job);

/* rbln_sched.c: the engines' schedulers, created with the device. */
int rbln_engines_init(struct rbln_device *rdev);
void rbln_engines_fini(struct rbln_device *rdev);
/* The device is going: jobs on the hardware end with -ENODEV. */
void rbln_engines_stop(struct rbln_device *rdev);
/* Hands @job (initialised on the engine's entity, fences reserved) to the scheduler. */
void rbln_sched_push(struct rbln_job *job);
/* The error a job should end with before it runs, or 0. */
int rbln_job_precheck(struct rbln_job *job);
/*
 * Fills what the backend reaches of @job's buffers, right before it is
 * handed over; -ENODEV if one lost its backing meanwhile.  Allocates nothing.
 */
int rbln_job_hw_buffers(struct rbln_job *job);
/* The event and log line of a job ended by the timeout (outside the signalling path). */
void rbln_job_timeout_report(struct rbln_job *job);

/* rbln_fence.c: the hardware fence of a scheduled job. */
struct rbln_fence;
struct rbln_fence *rbln_fence_alloc(void);
struct dma_fence *rbln_fence_start(struct rbln_fence *f, struct rbln_engine *engine);
void rbln_fence_free_unstarted(struct rbln_fence *f);
struct dma_fence *rbln_fence_start_ended(struct rbln_fence *f, struct drm_device *drm, int error);
struct dma_fence *rbln_fence_create_failed(int error);

/* rbln_usage.c */
struct drm_printer;
int rbln_ioctl_client_usage(struct drm_device *drm, void *data, struct drm_file *file);
void rbln_show_fdinfo(struct drm_printer *p, struct drm_file *file);

int rbln_ioctl_submit(struct drm_device *drm, void *data, struct drm_file *file);
int rbln_ioctl_submit_batch(struct drm_device *drm, void *data, struct drm_file *file);
int rbln_ioctl_wait(struct drm_device *drm, void *data, struct drm_file *file);

#endif /* RBLN_JOB_H */
