// SPDX-License-Identifier: GPL-2.0-only
/* Compiles iff drm_sched_start() takes a bool full_recovery. */
#include <drm/gpu_scheduler.h>

void rbln_probe(struct drm_gpu_scheduler *sched);
void rbln_probe(struct drm_gpu_scheduler *sched)
{
	void (*start)(struct drm_gpu_scheduler *, bool) = drm_sched_start;

	start(sched, true);
}
