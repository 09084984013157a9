// SPDX-License-Identifier: GPL-2.0-only
/* Compiles iff the DRM core has timeline syncobjs. */
#include <drm/drm_drv.h>
#include <drm/drm_syncobj.h>

static const u32 rbln_probe_features __maybe_unused = DRIVER_SYNCOBJ | DRIVER_SYNCOBJ_TIMELINE;
