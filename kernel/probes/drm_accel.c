// SPDX-License-Identifier: GPL-2.0-only
/* Compiles iff the kernel has the DRM compute-accel API. */
#include <drm/drm_accel.h>
#include <drm/drm_drv.h>
#include <drm/drm_file.h>
#include <drm/drm_gem.h>
#include <drm/drm_ioctl.h>

DEFINE_DRM_ACCEL_FOPS(rbln_probe_fops);

static const struct drm_driver rbln_probe_driver __maybe_unused = {
	.driver_features = DRIVER_COMPUTE_ACCEL,
	.fops = &rbln_probe_fops,
};
