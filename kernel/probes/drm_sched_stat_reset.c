// SPDX-License-Identifier: GPL-2.0-only
/* Compiles iff a timeout handler reports a reset as DRM_GPU_SCHED_STAT_RESET (not NOMINAL). */
#include <drm/gpu_scheduler.h>

static const enum drm_gpu_sched_stat rbln_probe_stat __maybe_unused = DRM_GPU_SCHED_STAT_RESET;
