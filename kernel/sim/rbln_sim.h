/* SPDX-License-Identifier: GPL-2.0-only */
/* The simulation backend: NPUs without silicon, in the spirit of netdevsim. */
#ifndef RBLN_SIM_H
#define RBLN_SIM_H

#include <linux/atomic.h>
#include <linux/device.h>
#include <linux/list.h>
#include <linux/sizes.h>
#include <linux/spinlock.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <drm/rbln_drm.h>

#include "../rbln_hw.h"

struct rbln_device;
struct rbln_hw_info;
struct rbln_sku;

struct rbln_sim_device;

/*
 * A job's bytes (RBLN_SIM_JOB_MAX_BYTES at most: about 20 ms at the memcpy
 * speed of a VM without KVM, and well inside the timeout on a host so loaded
 * that 64 MiB took over a second) are copied RBLN_SIM_CHUNK at a time, a
 * reset checked for between chunks: a chunk takes a few milliseconds, far
 * inside RBLN_HW_RESET_MAX_MS.
 */
#define RBLN_SIM_JOB_MAX_BYTES	SZ_16M
#define RBLN_SIM_CHUNK		SZ_1M

/*
 * The device number of every simulated NPU's bus id (0000:<id>:20.0): PCI
 * has 32 devices per bus, 00..1f, so no real function has it.
 */
#define RBLN_SIM_PCI_DEVICE	0x20

/* One simulated engine: it runs the job it was given in a work item of its own. */
struct rbln_sim_engine {
	struct rbln_sim_device *sdev;
	spinlock_t lock;		/* job, hung */
	struct rbln_hw_job *job;	/* pushed, not reported yet */
	bool hung;			/* fault injection: holds its job */
	struct work_struct work;
	wait_queue_head_t reset_wait;	/* a slowed chunk wakes early on a reset */
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
	atomic_t fail_next_resets;	/* the next N engine or device resets fail with -EIO */
	u32 slow_us;			/* each chunk takes this much longer */
	bool no_direct;			/* every job goes through the scheduler */
	bool chiplet_down[RBLN_MAX_CHIPLETS];
};

/* A request to create a device: what new_device is given, parsed. */
struct rbln_sim_spec {
	unsigned int id;
	const struct rbln_sku *sku;
	u64 memory;			/* bytes */
};

/* What /sys/bus/rbln_sim/{new,del}_device do; also the KUnit tests' way in. */
int rbln_sim_parse_spec(const char *buf, unsigned int default_mib, struct rbln_sim_spec *spec);
int rbln_sim_new_device(const char *buf);
int rbln_sim_del_device(unsigned int id);
/* The core device of simulated device @id, referenced (drm_dev_put()), or NULL. */
struct rbln_device *rbln_sim_find_device(unsigned int id);

/* rbln_sim_hw.c: the simulated hardware behind struct rbln_hw_ops. */
extern const struct rbln_hw_ops rbln_sim_hw_ops;
void rbln_sim_fill_info(const struct rbln_sim_device *sdev, struct rbln_hw_info *info);
/* The simulated products' engines, for @chiplets chiplets. */
void rbln_sim_fill_engines(unsigned int chiplets, struct rbln_hw_info *info);
/* Their die-to-die links: a 2x2 grid of chiplets, each linked to those beside it. */
void rbln_sim_fill_links(unsigned int chiplets, struct rbln_hw_info *info);

/* sim_dma: devices probed from now on take their buffers as DMA addresses (the KUnit suites set it too). */
extern bool rbln_sim_dma;

/* rbln_sim_engine.c: engines that copy with the CPU and report through the completion hook. */
/* The engines' work queue, before the first device and after the last. */
int rbln_sim_wq_init(void);
void rbln_sim_wq_fini(void);
void rbln_sim_engines_init(struct rbln_sim_device *sdev);
void rbln_sim_engines_fini(struct rbln_sim_device *sdev);
int rbln_sim_engine_push(struct rbln_device *rdev, struct rbln_hw_job *job);
int rbln_sim_engine_run_now(struct rbln_device *rdev, struct rbln_hw_job *job);
int rbln_sim_engine_reset(struct rbln_device *rdev, u32 chiplet, enum drm_rbln_engine kind);
int rbln_sim_device_reset(struct rbln_device *rdev);
/* The simulated interrupts are the engines' work items: none runs after this. */
void rbln_sim_sync_irq(struct rbln_device *rdev);
/*
 * Copies @size bytes a chunk at a time for @job on engine @e; returns how
 * many, fewer if a reset took the job back meanwhile.  @e NULL: a direct
 * job's copy, which stops to yield its engine; with no @job either, a copy
 * that nothing stops.
 */
u64 rbln_sim_copy(struct rbln_sim_engine *e, const struct rbln_hw_job *job, void *dst,
		  const void *src, u64 size);

/* rbln_sim_mem.c: device memory is host memory. */
void *rbln_sim_mem_alloc(struct rbln_device *rdev, u32 chiplet, u64 address, size_t size);
void rbln_sim_mem_free(struct rbln_device *rdev, void *vaddr);
struct page *rbln_sim_mem_page(struct rbln_device *rdev, void *vaddr, size_t offset);

/* Fault injection, as the debugfs files do it (also the KUnit tests' way in). */
void rbln_sim_set_hang(struct rbln_device *rdev, u32 chiplet, enum drm_rbln_engine kind, bool on);
void rbln_sim_fail_next_jobs(struct rbln_device *rdev, int n);
void rbln_sim_set_chiplet_down(struct rbln_device *rdev, u32 chiplet, bool down);

/* rbln_sim_debugfs.c: the fault-injection files. */
void rbln_sim_debugfs_init(struct rbln_sim_device *sdev);

#endif /* RBLN_SIM_H */
