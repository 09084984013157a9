// SPDX-License-Identifier: GPL-2.0-only
/* Compiles iff mmap of an exported dma-buf goes through drm_driver.gem_prime_mmap
 * (without it, such a mapping fails with -ENOSYS). */
#include <drm/drm_drv.h>
#include <drm/drm_prime.h>

static const struct drm_driver rbln_probe_driver __maybe_unused = {
	.gem_prime_mmap = drm_gem_prime_mmap,
};
