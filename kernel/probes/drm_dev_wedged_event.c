// SPDX-License-Identifier: GPL-2.0-only
/* Compiles iff drm_dev_wedged_event(dev, method) exists (6.14 to 6.16). */
#include <drm/drm_drv.h>

static int __maybe_unused rbln_probe(struct drm_device *dev)
{
	return drm_dev_wedged_event(dev, DRM_WEDGE_RECOVERY_REBIND);
}
