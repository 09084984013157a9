/* SPDX-License-Identifier: GPL-2.0-only */
/* Device times of a file's own jobs, for its profiler (DRM_RBLN_SUBMIT_TIMES). */
#ifndef RBLN_TIMES_H
#define RBLN_TIMES_H

#include <linux/types.h>

struct drm_device;
struct drm_file;
struct drm_rbln_submit;
struct rbln_client;
struct rbln_job;

/* The file's ring, made on its first SUBMIT_TIMES job (client->lock held). */
int rbln_times_enable(struct rbln_client *client);
/* An ended job asked for its times: its record goes to the ring (process context). */
void rbln_times_record(struct rbln_job *job);
/*
 * A job that ran inside SUBMIT, which reports its end (@ended, REPORT_END):
 * its times go to @args with DRM_RBLN_SUBMIT_REPORT_TIMES, else to the ring.
 */
void rbln_times_report(struct rbln_job *job, struct drm_rbln_submit *args, bool ended);
/* The client goes: its ring with it. */
void rbln_times_free(struct rbln_client *client);

int rbln_ioctl_job_times(struct drm_device *drm, void *data, struct drm_file *file);

#endif /* RBLN_TIMES_H */
