// SPDX-License-Identifier: GPL-2.0-only
/* Compiles iff drm_sched_start() takes the error to give cancelled jobs (an int, not a bool). */
#include <drm/gpu_scheduler.h>

void rbln_probe(struct drm_gpu_scheduler *sched);
void rbln_probe(struct drm_gpu_scheduler *sched)
{
	void (*start)(struct drm_gpu_scheduler *, int) = drm_sched_start;

	start(sched, 0);
}
