// SPDX-License-Identifier: GPL-2.0-only
/* Compiles iff a timeout handler can say the job did not hang (DRM_GPU_SCHED_STAT_NO_HANG). */
#include <drm/gpu_scheduler.h>

static const enum drm_gpu_sched_stat rbln_probe_stat __maybe_unused = DRM_GPU_SCHED_STAT_NO_HANG;
