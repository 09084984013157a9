/* SPDX-License-Identifier: GPL-2.0-only */
/* Syncobjs of SUBMIT: what a job waits for and where its fence goes. */
#ifndef RBLN_SYNC_H
#define RBLN_SYNC_H

#include <linux/types.h>
#include <drm/rbln_drm.h>

struct dma_fence;
struct dma_fence_chain;
struct drm_file;
struct drm_syncobj;
struct rbln_job;

/*
 * The error @fence failed with, looking inside timeline points and merged
 * fences; 0 if none (yet).
 */
int rbln_fence_error(struct dma_fence *fence);
/* Every fence @job waits for has signalled (the failed ones it keeps). */
bool rbln_job_deps_signalled(const struct rbln_job *job);

/* A syncobj and point as the rbln_job_wait/signal tracepoints name them. */
struct rbln_sync_trace {
	u64 sync, point;
};
/* The tracepoints' name of @obj: a hash of it, not its address. */
u64 rbln_sync_trace_key(const struct drm_syncobj *obj);

/* The fences of args->in_syncs that have not signalled (or failed) become @job's dependencies. */
int rbln_job_read_in_syncs(struct rbln_job *job, struct drm_file *file,
			   const struct drm_rbln_submit *args);

/* args->out_sync, looked up before the job is queued. */
struct rbln_out_sync {
	struct drm_syncobj *syncobj;	/* NULL: none asked for */
	struct dma_fence_chain *chain;	/* timeline point, allocated up front */
	u64 point;
};

int rbln_out_sync_prepare(struct rbln_out_sync *out, struct drm_file *file,
			  const struct drm_rbln_sync *sync);
/* Gives the out_sync @fence; NULL: the job ended well already. */
void rbln_out_sync_signal(struct rbln_out_sync *out, struct dma_fence *fence);
void rbln_out_sync_fini(struct rbln_out_sync *out);

#endif /* RBLN_SYNC_H */
