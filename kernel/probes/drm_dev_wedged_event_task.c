// SPDX-License-Identifier: GPL-2.0-only
/* Compiles iff drm_dev_wedged_event(dev, method, task_info) exists (6.17+). */
#include <drm/drm_drv.h>

static int __maybe_unused rbln_probe(struct drm_device *dev)
{
	return drm_dev_wedged_event(dev, DRM_WEDGE_RECOVERY_REBIND, NULL);
}
