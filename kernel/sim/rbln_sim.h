/* SPDX-License-Identifier: GPL-2.0-only */
/* The simulation backend: NPUs without silicon, in the spirit of netdevsim. */
#ifndef RBLN_SIM_H
#define RBLN_SIM_H

#include <linux/atomic.h>
#include <linux/device.h>
#include <linux/list.h>
#include <linux/spinlock.h>
#include <linux/workqueue.h>
#include <drm/rbln_drm.h>

#include "../rbln_hw.h"

struct rbln_device;
struct rbln_hw_info;
struct rbln_sku;

struct rbln_sim_device;

/* One simulated engine: it runs the job it was given in a work item of its own. */
struct rbln_sim_engine {
	struct rbln_sim_device *sdev;
	spinlock_t lock;		/* job, hung */
	struct rbln_hw_job *job;	/* pushed, not reported yet */
	bool hung;			/* fault injection: holds its job */
	struct work_struct work;
};

struct rbln_sim_device {
	struct device dev;		/* /sys/bus/rbln_sim/devices/rbln_simN */
	struct list_head list;
	unsigned int id;
	const struct rbln_sku *sku;
	u64 memory;			/* bytes */
	struct rbln_device *rdev;	/* while bound to the driver */
	struct rbln_sim_engine engines[RBLN_MAX_CHIPLETS][DRM_RBLN_ENGINE_COUNT];
	/* Fault injection (rbln_sim_debugfs.c). */
	atomic_t fail_next_jobs;	/* the next N jobs fail with -EIO */
	bool chiplet_down[RBLN_MAX_CHIPLETS];
};

/* A request to create a device: what new_device is given, parsed. */
struct rbln_sim_spec {
	unsigned int id;
	const struct rbln_sku *sku;
	u64 memory;			/* bytes */
};

int rbln_sim_init(void);

/* What /sys/bus/rbln_sim/{new,del}_device do; also the KUnit tests' way in. */
int rbln_sim_parse_spec(const char *buf, unsigned int default_mib, struct rbln_sim_spec *spec);
int rbln_sim_new_device(const char *buf);
int rbln_sim_del_device(unsigned int id);
/* The core device of simulated device @id, referenced (drm_dev_put()), or NULL. */
struct rbln_device *rbln_sim_find_device(unsigned int id);
void rbln_sim_exit(void);

/* rbln_sim_hw.c: the simulated hardware behind struct rbln_hw_ops. */
extern const struct rbln_hw_ops rbln_sim_hw_ops;
void rbln_sim_fill_info(const struct rbln_sim_device *sdev, struct rbln_hw_info *info);

/* rbln_sim_engine.c: engines that copy with the CPU and report through the completion hook. */
void rbln_sim_engines_init(struct rbln_sim_device *sdev);
void rbln_sim_engines_fini(struct rbln_sim_device *sdev);
void rbln_sim_engine_push(struct rbln_device *rdev, struct rbln_hw_job *job);
int rbln_sim_engine_run_now(struct rbln_device *rdev, struct rbln_hw_job *job);
void rbln_sim_engine_reset(struct rbln_device *rdev, u32 chiplet, enum drm_rbln_engine kind);
void rbln_sim_device_reset(struct rbln_device *rdev);

/* rbln_sim_mem.c: device memory is host memory. */
void *rbln_sim_mem_alloc(struct rbln_device *rdev, u32 chiplet, size_t size);
void rbln_sim_mem_free(struct rbln_device *rdev, void *vaddr);
struct page *rbln_sim_mem_page(struct rbln_device *rdev, void *vaddr, size_t offset);

/* Fault injection, as the debugfs files do it (also the KUnit tests' way in). */
void rbln_sim_set_hang(struct rbln_device *rdev, u32 chiplet, enum drm_rbln_engine kind, bool on);
void rbln_sim_fail_next_jobs(struct rbln_device *rdev, int n);
void rbln_sim_set_chiplet_down(struct rbln_device *rdev, u32 chiplet, bool down);

/* rbln_sim_debugfs.c: the fault-injection files. */
void rbln_sim_debugfs_init(struct rbln_sim_device *sdev);

#endif /* RBLN_SIM_H */
