// SPDX-License-Identifier: GPL-2.0-only
/* Compiles iff the DRM core has the fdinfo helpers: show_fdinfo hooks,
 * memory stats from GEM object status, and a client id per file. */
#include <linux/fs.h>
#include <drm/drm_drv.h>
#include <drm/drm_file.h>
#include <drm/drm_gem.h>
#include <drm/drm_print.h>

static void rbln_probe_show(struct drm_printer *p, struct drm_file *file)
{
	drm_show_memory_stats(p, file);
	drm_printf(p, "%llu\n", file->client_id);
}

static enum drm_gem_object_status rbln_probe_status(struct drm_gem_object *obj)
{
	return DRM_GEM_OBJECT_RESIDENT;
}

static const struct drm_driver rbln_probe_driver __maybe_unused = {
	.show_fdinfo = rbln_probe_show,
};

static const struct drm_gem_object_funcs rbln_probe_funcs __maybe_unused = {
	.status = rbln_probe_status,
};

static const struct file_operations rbln_probe_fops __maybe_unused = {
	.show_fdinfo = drm_show_fdinfo,
};
