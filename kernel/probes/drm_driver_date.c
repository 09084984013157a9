// SPDX-License-Identifier: GPL-2.0-only
/* Compiles iff struct drm_driver still has a date (removed in 6.14). */
#include <drm/drm_drv.h>

static const struct drm_driver rbln_probe_driver __maybe_unused = {
	.date = "20261129",
};
