/* SPDX-License-Identifier: GPL-2.0-only */
/* The core's view of one NPU package: a DRM device with chiplets and engines. */
#ifndef RBLN_DEVICE_H
#define RBLN_DEVICE_H

#include <linux/atomic.h>
#include <linux/kobject.h>
#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <drm/drm_device.h>
#include <drm/gpu_scheduler.h>

#include "rbln_buddy.h"
#include "rbln_hw.h"
#include "rbln_mem.h"
#include "rbln_sku.h"

/* RBLN_DRIVER_VERSION comes from kernel/VERSION through Kbuild. */

struct rbln_job;

/*
 * One engine of one chiplet: a DRM GPU scheduler that runs one job at a time.
 * Each file submits through an entity of its own (struct rbln_client), so its
 * jobs run in its submission order, and a job waiting for its inputs holds up
 * only its own file's later jobs.
 */
struct rbln_engine {
	enum drm_rbln_engine kind;
	bool present;
	struct rbln_chiplet *chiplet;
	struct drm_gpu_scheduler sched;
	bool sched_ready;		/* sched initialised */
	struct mutex submit_lock;	/* arm + push order; direct jobs */
	atomic_t queued;		/* pushed to the scheduler, not ended */
	atomic_t waiting;		/* SUBMITs waiting for submit_lock to queue */
	atomic_t unfreed;		/* pushed, free_job not run yet */
	spinlock_t active_lock;
	struct rbln_job *active;	/* given to the hardware, not ended */
	u64 fence_context;
	atomic64_t fence_seqno;
	atomic_t resets;
	atomic64_t busy_ns;
};

struct rbln_chiplet {
	struct rbln_device *rdev;
	unsigned int index;
	u64 memory_total;
	atomic64_t memory_used;		/* taken by buffers, placed or not (the allocator's) */
	atomic64_t memory_placed;	/* with backing */
	struct rbln_engine engines[DRM_RBLN_ENGINE_COUNT];
	struct kobject *kobj;		/* chipletN/ in sysfs */
	bool down;			/* lost, as the backend reported */
};

/*
 * Busy time: the time during which at least one engine of the device ran a
 * job.  Utilisation is busy time over a sampling window of at least
 * RBLN_UTIL_WINDOW_NS, so every reader sees the same recent figure.
 */
struct rbln_busy {
	spinlock_t lock;
	unsigned int active;		/* jobs running now */
	u64 active_since_ns;
	u64 total_ns;			/* completed busy periods */
	u64 sample_time_ns;		/* start of the current window */
	u64 sample_busy_ns;
	u32 utilization;		/* percent, over the last full window */
};

struct rbln_device {
	struct drm_device drm;
	struct device *parent;
	const struct rbln_hw_ops *hw;
	void *hw_priv;
	struct rbln_hw_info info;
	unsigned int nr_chiplets;
	struct rbln_chiplet chiplets[RBLN_MAX_CHIPLETS];
	atomic_t status;		/* enum drm_rbln_status */
	atomic_t faults;		/* times the status became FAULT (sysfs faults) */
	atomic_t memory_errors;		/* uncorrectable ones the backend reported */
	struct rbln_busy busy;
	struct mutex mem_lock;		/* mem_windows */
	/* Device memory: one allocator per chiplet, then the interleaved window (rbln_mem.c). */
	struct rbln_buddy mem_windows[RBLN_MEM_WINDOWS];
	struct list_head mem_guards[RBLN_MEM_WINDOWS];	/* each window's guard page, if held */
	struct mutex bos_lock;		/* bos */
	struct list_head bos;		/* buffers made here, device or host (struct rbln_bo) */
	bool dying;			/* being removed: jobs end with -ENODEV */
	bool wedged;			/* a reset failed: jobs end with -EIO until RESET works */
	int wedge_error;		/* what the failed reset returned */
	struct work_struct wedge_work;	/* the FAULT status and events of a wedge */
	wait_queue_head_t sched_idle;	/* an engine's last job was freed */
	struct mutex entities_lock;	/* entity_clients, clients' entities */
	struct list_head entity_clients;	/* files with scheduler entities */
	struct mutex clients_lock;	/* clients, owner */
	struct list_head clients;	/* open files (struct rbln_client) */
	struct rbln_client *owner;	/* the file that acquired the device */
	struct dentry *debugfs;
};

static inline struct rbln_device *to_rbln_device(struct drm_device *drm)
{
	return container_of(drm, struct rbln_device, drm);
}

/* Driver capabilities, independent of the backend. */
u64 rbln_driver_capabilities(void);
u64 rbln_device_capabilities(const struct rbln_device *rdev);
u64 rbln_device_memory_used(struct rbln_device *rdev);
u64 rbln_device_memory_placed(struct rbln_device *rdev);
unsigned long rbln_chiplet_engine_mask(const struct rbln_chiplet *chiplet);

void rbln_device_set_status(struct rbln_device *rdev, enum drm_rbln_status status);
/*
 * A reset of the hardware failed with @error: no job runs until a RESET
 * succeeds.  Allocates nothing (the timeout handler calls it): the status
 * change and the events follow from a work item.
 */
void rbln_device_wedge(struct rbln_device *rdev, int error);
/* RESET: the backend's device reset, then the device works again or stays wedged. */
int rbln_device_recover(struct rbln_device *rdev);
enum drm_rbln_status rbln_device_status(const struct rbln_device *rdev);
const char *rbln_status_name(enum drm_rbln_status status);

/* rbln_drv.c: the DRM driver every device is made of. */
extern const struct drm_driver rbln_drm_driver;

/* rbln_busy.c */
void rbln_busy_init(struct rbln_busy *busy);
u64 rbln_busy_begin(struct rbln_busy *busy);
u64 rbln_busy_end(struct rbln_busy *busy);
u64 rbln_busy_total_ns(struct rbln_busy *busy);
u32 rbln_busy_utilization(struct rbln_busy *busy);

/* rbln_sysfs.c */
int rbln_sysfs_init(struct rbln_device *rdev);
void rbln_sysfs_fini(struct rbln_device *rdev);

/* rbln_query.c */
struct drm_file;
int rbln_ioctl_get_param(struct drm_device *drm, void *data, struct drm_file *file);
int rbln_ioctl_device_info(struct drm_device *drm, void *data, struct drm_file *file);
int rbln_ioctl_device_status(struct drm_device *drm, void *data, struct drm_file *file);

/* rbln_debugfs.c */
void rbln_debugfs_init(void);
void rbln_debugfs_fini(void);
void rbln_debugfs_device_init(struct rbln_device *rdev);
void rbln_debugfs_device_fini(struct rbln_device *rdev);

/* rbln_gem.c */
int rbln_ioctl_bo_create(struct drm_device *drm, void *data, struct drm_file *file);
int rbln_ioctl_bo_info(struct drm_device *drm, void *data, struct drm_file *file);

/* With struct rbln_device known, the core's wrappers of the backend calls. */
#define RBLN_DEVICE_DEFINED
#include "rbln_hw.h"

#endif /* RBLN_DEVICE_H */
