/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The hardware-ops boundary.  The core driver (DRM device, UAPI, sysfs,
 * accounting) knows nothing about where a device comes from.  A backend
 * (the simulator in sim/, a PCI driver) discovers devices, fills a struct
 * rbln_hw_info, and hands both to rbln_device_create() together with its
 * struct rbln_hw_ops.
 *
 * This is the only core header a backend includes (besides the product
 * table rbln_sku.h and the compat and test-point shims): what a backend may
 * know of a device is what the accessors below give it.  The core, in turn,
 * calls a backend only through the rbln_hw_*() wrappers at the end of this
 * file, never through ->ops itself.
 */
#ifndef RBLN_HW_H
#define RBLN_HW_H

#include <linux/sizes.h>
#include <linux/types.h>
#include <linux/uuid.h>
#include <drm/rbln_drm.h>

struct device;
struct page;
struct rbln_device;
struct rbln_sku;

#define RBLN_MAX_CHIPLETS	4
/*
 * mem_alloc's chiplet for host memory (External HDMA's other side); not
 * DRM_RBLN_CHIPLET_INTERLEAVED (~0U), which mem_alloc is given as well.
 */
#define RBLN_HW_HOST_MEMORY	(~0U - 1)
/* Device addresses: chiplet N's memory is the window at N * RBLN_CHIPLET_WINDOW. */
#define RBLN_CHIPLET_WINDOW	(1ULL << 40)

/*
 * The kinds of link between two chiplets of one package, as sysfs names them
 * (chipletN/links).  0 is no link.
 */
enum rbln_hw_link_kind {
	RBLN_HW_LINK_NONE = 0,
	RBLN_HW_LINK_D2D,		/* die-to-die (UCIe) */
	RBLN_HW_LINK_KINDS
};

/* Identity of one device, fixed for its lifetime. */
struct rbln_hw_info {
	const struct rbln_sku *sku;
	u32 index;			/* N of /dev/rblnN, unique per host */
	u64 memory_total;		/* bytes, split evenly over chiplets */
	uuid_t uuid;
	char serial[32];
	char pci_bus_id[16];
	int numa_node;
	char firmware_version[32];
	/* The board's PCI ids (0: Rebellions' vendor id and the product's device id). */
	u16 pci_vendor_id;
	u16 pci_device_id;
	/* The PCIe link the board sits behind: MT/s per lane and lanes (0: unknown). */
	u32 pci_link_speed_mts;
	u32 pci_link_width;
	u64 capabilities;		/* backend's DRM_RBLN_CAP_* bits */
	/*
	 * Most bytes one job may copy (DRM_RBLN_PARAM_JOB_MAX_BYTES): small
	 * enough that the engine ends such a job well inside the default
	 * job_timeout_ms; SUBMIT refuses bigger ones.
	 */
	u64 job_max_bytes;
	/*
	 * The engines each chiplet has (BIT(enum drm_rbln_engine)); SUBMIT to
	 * any other is refused.  Only a chiplet that talks to the host has
	 * External HDMA.
	 */
	u32 engines[RBLN_MAX_CHIPLETS];
	/*
	 * The links between chiplets: links[a][b] is the kind of the link
	 * joining chiplets a and b (enum rbln_hw_link_kind), the same as
	 * links[b][a]; the diagonal and chiplets past the product's are 0.  The
	 * hardware's wiring, not an assumption: a one-die part has none.
	 */
	u8 links[RBLN_MAX_CHIPLETS][RBLN_MAX_CHIPLETS];
	/*
	 * Longest a job of job_max_bytes takes on this hardware, in ms: the
	 * job timeout is never shorter (0: the module's job_timeout_ms alone).
	 */
	u32 job_min_timeout_ms;
	/*
	 * The device whose DMA engines move the bytes, or NULL for a backend
	 * that copies with the CPU: jobs then carry each buffer mapped for it
	 * (its DMA mask and segment limits apply).  Buffers imported from
	 * another driver cannot be used in jobs of such a device (EOPNOTSUPP).
	 */
	struct device *dma_dev;
};

/*
 * How long engine_reset may take to stop a running job (and the longest a
 * timed-out job's WAIT may return after job_timeout_ms).
 */
#define RBLN_HW_RESET_MAX_MS	50

/*
 * The most bytes of a job the core offers engine_run_now.  A CPU copy of that
 * much takes about 20 ms of CPU in a VM without KVM (a millisecond on a host),
 * inside RBLN_HW_RESET_MAX_MS: a job run inside SUBMIT holds its engine, and
 * whoever waits for the engine or the submitting file, no longer than a reset
 * may take to stop a scheduled one.  Bigger jobs (where a backend allows them)
 * go to the scheduler, whose timeout covers them.  (4 MiB before: in such a
 * VM a scheduled 16 MiB job ran at 0.79x the kernel's copy of its bytes.)
 * The copy runs on the submitter's CPU time and never sleeps (a task its
 * cgroup's cpu.max throttles would sleep out its debt holding the engine);
 * a backend that can stop between chunks also yields the engine to another
 * file's job after a slice (rbln_hw_job_should_yield()).
 */
#define RBLN_HW_RUN_NOW_MAX_BYTES	SZ_16M
/*
 * How long a job run inside SUBMIT may run once it has its engine before it
 * gives way to another file's SUBMIT that waits to queue a job there: past
 * this, rbln_hw_job_should_yield() says so.
 */
#define RBLN_HW_RUN_NOW_SLICE_MS	5
/*
 * Above this many bytes only a task with a full share of the CPU runs a job
 * directly (not one with nice above 0, SCHED_BATCH or SCHED_IDLE): a smaller
 * copy is short whoever asks.
 */
#define RBLN_HW_RUN_NOW_ANY_TASK_BYTES	SZ_4M

/* What the core reads from the hardware's sensors. */
struct rbln_sensors {
	int temperature_mc;		/* millidegrees Celsius */
	u32 power_uw;			/* microwatts */
	u32 pstate;			/* 0 fastest .. 15 slowest, shown as "P<n>" */
};

struct sg_table;

/*
 * One side of a copy, as the backend reaches it: the buffer's bytes for the
 * CPU, and for a backend that asked for DMA addresses (rbln_hw_info.dma_dev)
 * the copy's bytes of it mapped for that device (the source DMA_TO_DEVICE,
 * the destination DMA_FROM_DEVICE).  The sg table is built at SUBMIT, but
 * dma_map_sgtable() maps it only right before the job is handed to its
 * engine, and it is unmapped once the job ended and before its fence signals
 * (so never while the backend may still touch it, and the device's writes
 * reach the CPU's pages before anyone may read them): a device's DMA window
 * holds the IOVAs of the jobs on its engines alone, never of queued ones, so
 * however many jobs a file queues it cannot use the window up for the others
 * (edu's is 28 bits: 256 MiB).  A mapping that fails then fails its job with
 * the DMA API's error (-ENOMEM).
 */
struct rbln_hw_buffer {
	void *cpu;			/* the whole buffer's backing, mapped for the CPU */
	/*
	 * dma_dev backends: the DMA addresses of the copy's bytes only, its
	 * byte 0 the copy's first (src_offset or dst_offset); else NULL.
	 */
	struct sg_table *sgt;
};

/*
 * One job as an engine sees it: copies between buffers.  The core fills it,
 * keeps the buffers alive and placed until the backend reports the end, and
 * never pushes a second job to an engine before the first one ended.  The
 * copies' offsets are into the buffers of @bufs, never handles to look up.
 */
struct rbln_hw_job {
	u32 chiplet;
	enum drm_rbln_engine engine;
	u32 count;
	const struct drm_rbln_copy *copies;
	const struct rbln_hw_buffer *bufs;	/* src and dst of copy i at 2i and 2i + 1 */
	u64 bytes;			/* sum of the copies' sizes */
	/*
	 * Where engine_run_now stopped when it yielded (-EINPROGRESS): copy
	 * @copy, its first @offset bytes done (counted in bytes of the copy,
	 * never in segments or addresses: the job is mapped anew before its
	 * push, maybe elsewhere), so that engine_push goes on from there.
	 * Zero when the core first hands the job over, and left zero by an
	 * engine_run_now that ran nothing; a backend without engine_run_now
	 * never sees it otherwise.
	 */
	struct {
		u32 copy;
		u64 offset;
	} resume;
};

struct rbln_hw_ops {
	/* Fill @s.  Called with the device alive (inside drm_dev_enter). */
	void (*read_sensors)(struct rbln_device *rdev, struct rbln_sensors *s);

	/*
	 * Engines.  push starts @job on its engine (the doorbell) and returns 0,
	 * or an error if the engine did not take it: the core then ends the job
	 * with that error itself, and the backend never reports it.  push never
	 * sleeps: it is called in atomic context (the core holds a spinlock that
	 * orders it against removal), so a backend that must sleep to start a
	 * job (a firmware mailbox, a runtime-PM resume) queues a work item of
	 * its own.  After a 0, the backend reports the end with
	 * rbln_hw_job_done() from its interrupt thread or a work item, which may
	 * run before push has returned.
	 */
	int (*engine_push)(struct rbln_device *rdev, struct rbln_hw_job *job);
	/*
	 * Optional direct path: run a small @job (RBLN_HW_RUN_NOW_MAX_BYTES at
	 * most) to its end now and return its status (0 or a negative errno),
	 * or -EAGAIN to have it pushed instead.  Only called for an engine with
	 * nothing pushed, from SUBMIT with the file's locks held (process context):
	 * it must end within RBLN_HW_RESET_MAX_MS, as nothing times it out (a
	 * backend that cannot promise that for a job, e.g. a hung or slowed
	 * engine, returns -EAGAIN).  It runs on the submitter's CPU time and
	 * must not sleep (no cond_resched()): a task that its cgroup's cpu.max
	 * throttles would sleep for seconds holding the engine.  A backend that
	 * works in chunks may ask rbln_hw_job_should_yield() before each: on
	 * true it stops, and once its engine is quiet and the
	 * bytes it copied have landed, notes where in @job->resume and returns
	 * -EINPROGRESS (or -EAGAIN if it had copied nothing).  The core then
	 * schedules the job, and its engine_push resumes it there, never
	 * redoing a copy (a job may read what it wrote).
	 */
	int (*engine_run_now)(struct rbln_device *rdev, struct rbln_hw_job *job);
	/*
	 * Optional, at SUBMIT (process context, the job built, its sg tables
	 * built but not mapped yet: their nents count CPU segments, at least
	 * as many as the DMA ones; nothing run yet): 0, or -EINVAL for a job this engine could
	 * not end within the time job_min_timeout_ms was sized for (e.g. too
	 * many transfers), which SUBMIT then refuses.  @job is not kept.
	 */
	int (*engine_check)(struct rbln_device *rdev, const struct rbln_hw_job *job);
	/*
	 * The engine's job ran past its timeout: stop the engine and make it
	 * usable again, within RBLN_HW_RESET_MAX_MS however far the job got,
	 * allocating nothing (the jobs queued behind it cannot signal
	 * meanwhile).  After this returns the backend no longer touches that
	 * job and never reports it, whatever it returns: 0, or an error if the
	 * engine could not be brought back, which wedges the device (status
	 * FAULT, a FAULT event and the kernel's WEDGED uevent where it has one;
	 * no job runs until a RESET succeeds).  A backend that finds out only
	 * later that the engine did not come back reports it through
	 * rbln_hw_device_wedged().
	 */
	int (*engine_reset)(struct rbln_device *rdev, u32 chiplet, enum drm_rbln_engine kind);
	/*
	 * Back to a working device (DRM_IOCTL_RBLN_RESET): faults cleared.  An
	 * error (the device refused, or cannot be reset: say why in the log)
	 * leaves it wedged and is what RESET returns.  Optional.
	 */
	int (*device_reset)(struct rbln_device *rdev);
	/*
	 * Removal, after the engines were stopped: returns once no interrupt
	 * handler or completion work of the backend runs for this device any
	 * more (synchronize_irq(), flush_work()).  Optional.
	 */
	void (*sync_irq)(struct rbln_device *rdev);

	/*
	 * Memory: the backing of a buffer of @size bytes on @chiplet (or
	 * DRM_RBLN_CHIPLET_INTERLEAVED, or a host buffer: chiplet
	 * RBLN_HW_HOST_MEMORY) at device address @address (which the core's
	 * allocator chose; 0 for host buffers), zeroed and charged to the calling process's
	 * memory cgroup; NULL when there is no room.  The address is how the
	 * core reaches the bytes (vmap for PRIME importers); mem_page gives the
	 * page behind an offset (mmap faults, exported sg tables).  The core's
	 * allocator gives the device address; this is only the backing behind it.
	 *
	 * After rbln_device_destroy() the core calls mem_alloc and mem_page no
	 * more (faults, exports and vmaps check drm_dev_enter()), but mem_free
	 * comes when the last file or importer lets a buffer go, which may be
	 * later: by design it touches no hardware and no per-device state the
	 * backend frees at removal (the backing is host memory).
	 */
	void *(*mem_alloc)(struct rbln_device *rdev, u32 chiplet, u64 address, size_t size);
	void (*mem_free)(struct rbln_device *rdev, void *vaddr);
	struct page *(*mem_page)(struct rbln_device *rdev, void *vaddr, size_t offset);
};

/*
 * Completion hook: the backend calls it once per pushed job, from process
 * context (a threaded interrupt handler or a work item), with 0, -EIO (the
 * engine failed the job) or -ENODEV (the chiplet or device is gone).  It
 * signals the job's fence: the caller must not hold a lock that is also held
 * while allocating memory or waiting for a fence.
 */
void rbln_hw_job_done(struct rbln_hw_job *job, int status);

/*
 * engine_run_now asks between chunks of @job (its own, and only there): true
 * once the job has had its engine RBLN_HW_RUN_NOW_SLICE_MS and another
 * file's SUBMIT waits to queue a job for that engine.  A few loads; never
 * sleeps.
 */
bool rbln_hw_job_should_yield(const struct rbln_hw_job *job);

/*
 * A kernel mapping of a dma-buf for a backend's own use (the simulator's
 * copy_bench): dma_buf_vmap() without its WARN on an rbln exporter whose
 * device went away or which cannot place the buffer (a plain error then).
 * Undone with rbln_dma_buf_vunmap() (rbln_compat.h).
 */
struct dma_buf;
struct iosys_map;
int rbln_hw_dmabuf_vmap(struct dma_buf *dmabuf, struct iosys_map *map);

/*
 * Errors the backend reports, from process context (a threaded interrupt
 * handler or a work item): they log, send the status uevent and events,
 * which allocate and may sleep.
 */
void rbln_hw_memory_error(struct rbln_device *rdev, u32 chiplet);
/* A chiplet stopped (@lost) or came back: its engines refuse jobs meanwhile. */
void rbln_hw_chiplet_lost(struct rbln_device *rdev, u32 chiplet, bool lost);
/*
 * The hardware cannot go on, and the backend learnt it only after
 * engine_reset had returned (edu: a transfer cannot be cancelled, and the
 * abandoned one never ended): the device is wedged as after a failed
 * engine_reset (status FAULT, the FAULT event, the kernel's WEDGED uevent
 * where it has one; jobs fail with -EIO until a RESET succeeds).  Any
 * context: it only marks the device and queues the announcement, allocating
 * nothing, so it may be called where fences are signalled.
 */
void rbln_hw_device_wedged(struct rbln_device *rdev, int error);
/* Where the backend's fault-injection or diagnostics files go (may be NULL). */
struct dentry *rbln_device_debugfs_dir(struct rbln_device *rdev);

struct rbln_device *rbln_device_create(struct device *parent,
				       const struct rbln_hw_info *info,
				       const struct rbln_hw_ops *ops,
				       void *hw_priv);
void rbln_device_destroy(struct rbln_device *rdev);

/* What a backend may know of a device it created. */
void *rbln_device_hw_priv(struct rbln_device *rdev);
const struct rbln_hw_info *rbln_device_info(const struct rbln_device *rdev);
unsigned int rbln_device_chiplets(const struct rbln_device *rdev);
bool rbln_device_has_engine(const struct rbln_device *rdev, u32 chiplet,
			    enum drm_rbln_engine kind);
/* A reference that keeps the device's memory (not the hardware) alive. */
void rbln_device_get(struct rbln_device *rdev);
void rbln_device_put(struct rbln_device *rdev);
/* Device-wide utilisation in percent over the last sampling window. */
u32 rbln_device_utilization(struct rbln_device *rdev);
const char *rbln_engine_name(enum drm_rbln_engine kind);

/*
 * The backends' entry points, the only backend symbols the core calls:
 * module init starts each backend, which then finds its devices and calls
 * rbln_device_create(); module exit stops it.  A backend configured out
 * (Kbuild) is a stub that starts nothing, as netdevsim does it.  Kbuild
 * says which are in (RBLN_BACKEND_*, from Kconfig in tree).
 */
#if IS_ENABLED(RBLN_BACKEND_SIM)
int rbln_sim_init(void);
void rbln_sim_exit(void);
#else
static inline int rbln_sim_init(void) { return 0; }
static inline void rbln_sim_exit(void) { }
#endif
#if IS_ENABLED(RBLN_BACKEND_PCI)
int rbln_pci_init(void);
void rbln_pci_exit(void);
#else
static inline int rbln_pci_init(void) { return 0; }
static inline void rbln_pci_exit(void) { }
#endif

#endif /* RBLN_HW_H */

/*
 * The core's calls into a backend.  They need struct rbln_device, so they
 * are compiled where rbln_device.h has defined it (it includes this file
 * again at its end); a backend, which never sees that struct, never sees
 * them either.
 */
#if defined(RBLN_DEVICE_DEFINED) && !defined(RBLN_HW_CALLS)
#define RBLN_HW_CALLS

static inline void rbln_hw_read_sensors(struct rbln_device *rdev, struct rbln_sensors *s)
{
	rdev->hw->read_sensors(rdev, s);
}

static inline int rbln_hw_engine_push(struct rbln_device *rdev, struct rbln_hw_job *job)
{
	return rdev->hw->engine_push(rdev, job);
}

static inline bool rbln_hw_can_run_now(const struct rbln_device *rdev)
{
	return rdev->hw->engine_run_now;
}

static inline int rbln_hw_engine_run_now(struct rbln_device *rdev, struct rbln_hw_job *job)
{
	return rdev->hw->engine_run_now(rdev, job);
}

static inline int rbln_hw_engine_check(struct rbln_device *rdev, const struct rbln_hw_job *job)
{
	return rdev->hw->engine_check ? rdev->hw->engine_check(rdev, job) : 0;
}

static inline int rbln_hw_engine_reset(struct rbln_device *rdev, u32 chiplet,
				       enum drm_rbln_engine kind)
{
	return rdev->hw->engine_reset(rdev, chiplet, kind);
}

static inline int rbln_hw_device_reset(struct rbln_device *rdev)
{
	return rdev->hw->device_reset ? rdev->hw->device_reset(rdev) : 0;
}

static inline void rbln_hw_sync_irq(struct rbln_device *rdev)
{
	if (rdev->hw->sync_irq)
		rdev->hw->sync_irq(rdev);
}

static inline void *rbln_hw_mem_alloc(struct rbln_device *rdev, u32 chiplet, u64 address,
				      size_t size)
{
	return rdev->hw->mem_alloc(rdev, chiplet, address, size);
}

static inline void rbln_hw_mem_free(struct rbln_device *rdev, void *vaddr)
{
	rdev->hw->mem_free(rdev, vaddr);
}

static inline struct page *rbln_hw_mem_page(struct rbln_device *rdev, void *vaddr, size_t offset)
{
	return rdev->hw->mem_page(rdev, vaddr, offset);
}

#endif /* RBLN_HW_CALLS */
