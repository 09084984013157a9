// SPDX-License-Identifier: GPL-2.0-only
/* Compiles iff drivers must set the PRIME handle<->fd hooks themselves. */
#include <drm/drm_drv.h>
#include <drm/drm_prime.h>

static const struct drm_driver rbln_probe_driver __maybe_unused = {
	.prime_handle_to_fd = drm_gem_prime_handle_to_fd,
	.prime_fd_to_handle = drm_gem_prime_fd_to_handle,
};
