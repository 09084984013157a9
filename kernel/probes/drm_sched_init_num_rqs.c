// SPDX-License-Identifier: GPL-2.0-only
/* Compiles iff struct drm_sched_init_args has run queues to size (num_rqs). */
#include <drm/gpu_scheduler.h>

static const struct drm_sched_init_args rbln_probe_args __maybe_unused = {
	.num_rqs = DRM_SCHED_PRIORITY_COUNT,
};
