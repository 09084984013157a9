// SPDX-License-Identifier: GPL-2.0-only
/* Compiles iff drm_sched_job_init() takes credits and a DRM client id (5 arguments). */
#include <drm/gpu_scheduler.h>

int rbln_probe(struct drm_sched_job *job, struct drm_sched_entity *entity);
int rbln_probe(struct drm_sched_job *job, struct drm_sched_entity *entity)
{
	return drm_sched_job_init(job, entity, 1, NULL, 0);
}
