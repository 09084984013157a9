/* SPDX-License-Identifier: GPL-2.0-only */
/* DMA jobs: per-file clients, per-engine queues, submit and wait. */
#ifndef RBLN_JOB_H
#define RBLN_JOB_H

#include "rbln_client.h"

struct drm_device;
struct drm_file;
struct rbln_device;
struct rbln_chiplet;


/* Engine queues of a device: created with it, drained when it goes away. */
int rbln_engines_init(struct rbln_device *rdev);
void rbln_engines_fini(struct rbln_device *rdev);
/* Wakes jobs waiting on a hung engine so they can see a state change. */
void rbln_engines_kick(struct rbln_device *rdev);

/* rbln_usage.c */
struct drm_printer;
int rbln_ioctl_client_usage(struct drm_device *drm, void *data, struct drm_file *file);
void rbln_show_fdinfo(struct drm_printer *p, struct drm_file *file);

int rbln_ioctl_submit(struct drm_device *drm, void *data, struct drm_file *file);
int rbln_ioctl_wait(struct drm_device *drm, void *data, struct drm_file *file);

#endif /* RBLN_JOB_H */
