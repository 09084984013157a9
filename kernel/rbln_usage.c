// SPDX-License-Identifier: GPL-2.0-only
/*
 * What one open file uses: its buffers and its engines' busy time.  Reported
 * by the CLIENT_USAGE ioctl on every kernel and, where the DRM core has the
 * fdinfo helpers (probes/drm_fdinfo.c), in /proc/<pid>/fdinfo with the
 * standard keys (drm-driver, drm-client-id, drm-*-memory, drm-engine-*).
 */
#include <linux/idr.h>
#include <drm/drm_file.h>
#include <drm/drm_gem.h>
#include <drm/drm_print.h>

#include "rbln_compat.h"
#include "rbln_device.h"
#include "rbln_gem.h"
#include "rbln_job.h"

static void rbln_file_memory(struct drm_file *file, struct drm_rbln_client_usage *usage)
{
	struct drm_gem_object *obj;
	int id;

	spin_lock(&file->table_lock);
	idr_for_each_entry(&file->object_idr, obj, id) {
		const struct rbln_bo *bo = to_rbln_bo(obj);

		usage->memory_total += obj->size;
		if (READ_ONCE(bo->vaddr))
			usage->memory_resident += obj->size;
		if (bo->accounted)
			usage->device_memory += obj->size;
	}
	spin_unlock(&file->table_lock);
}

int rbln_ioctl_client_usage(struct drm_device *drm, void *data, struct drm_file *file)
{
	struct rbln_client *client = file->driver_priv;
	struct drm_rbln_client_usage *args = data;
	unsigned int kind;

	if (args->flags || args->reserved)
		return -EINVAL;
	memset(args, 0, sizeof(*args));
	args->client_id = client->id;
	rbln_file_memory(file, args);
	for (kind = 0; kind < DRM_RBLN_ENGINE_COUNT; kind++)
		args->engine_busy_ns[kind] = atomic64_read(&client->engine_busy_ns[kind]);
	return 0;
}

#if RBLN_HAVE_DRM_FDINFO
void rbln_show_fdinfo(struct drm_printer *p, struct drm_file *file)
{
	struct rbln_client *client = file->driver_priv;
	unsigned int kind;

	drm_show_memory_stats(p, file);
	for (kind = 0; kind < DRM_RBLN_ENGINE_COUNT; kind++)
		drm_printf(p, "drm-engine-%s:\t%llu ns\n", rbln_engine_name(kind),
			   atomic64_read(&client->engine_busy_ns[kind]));
}
#endif
