// SPDX-License-Identifier: GPL-2.0-only
/* Compiles iff a scheduler fence can refuse pipelining (DRM_SCHED_FENCE_DONT_PIPELINE). */
#include <drm/gpu_scheduler.h>

static const unsigned int rbln_probe_bit __maybe_unused = DRM_SCHED_FENCE_DONT_PIPELINE;
