/* SPDX-License-Identifier: (GPL-2.0 WITH Linux-syscall-note) OR MIT */
/*
 * rbln_drm.h - user-space interface of the rbln NPU driver.
 *
 * This header is the single definition shared by the kernel module and user
 * space (libdevmgr, rbln-smi, tests).  Rules for changing it:
 *  - structs are fixed-size and explicitly padded (a build check compiles this
 *    header with -Wpadded -Werror);
 *  - structs only ever grow at the end; the DRM core zero-extends a shorter
 *    struct from older user space and truncates a longer reply;
 *  - every flags/reserved field must be zero on input, else -EINVAL, so that
 *    a future meaning can be given to it;
 *  - adding anything bumps DRM_RBLN_UAPI_VERSION; removing or changing the
 *    meaning of anything also bumps DRM_RBLN_UAPI_COMPAT_VERSION.
 */
#ifndef _UAPI_RBLN_DRM_H_
#define _UAPI_RBLN_DRM_H_

#include "drm.h"

#if defined(__cplusplus)
extern "C" {
#endif

/*
 * Interface version the driver implements, and the oldest version a consumer
 * may have been built against and still work.  A consumer built against
 * version V works with a driver iff COMPAT_VERSION <= V <= UAPI_VERSION.
 */
#define DRM_RBLN_UAPI_VERSION		16	/* 16: SUBMIT_REPORT_TIMES: a job
						 * that ended inside SUBMIT reports
						 * its device times there; submit_ns
						 * is read before SUBMIT's first
						 * wait (else it equals start_ns).
						 * 15: NPUs on PCI (QEMU's edu,
						 * DRM_RBLN_SKU_EDU); DEVICE_INFO
						 * gives the PCI link's speed and
						 * width, and the board's own PCI ids.
						 * 14: device times of a file's own
						 * jobs (SUBMIT_TIMES, JOB_TIMES);
						 * per-user buffer limits; the file's
						 * and user's limits are checked
						 * before anything else.
						 * 13: per-job byte limit; SUBMIT's
						 * full table is -ENOSPC; dependency
						 * errors through timeline points and
						 * sync_files; per-file buffer limits;
						 * mmap offsets made by BO_INFO. */
#define DRM_RBLN_UAPI_COMPAT_VERSION	1

#define DRM_RBLN_PCI_VENDOR_ID		0x1eff

#define DRM_RBLN_GET_PARAM		0x00
#define DRM_RBLN_DEVICE_INFO		0x01
#define DRM_RBLN_BO_CREATE		0x02
#define DRM_RBLN_BO_INFO		0x03
#define DRM_RBLN_SUBMIT			0x04
#define DRM_RBLN_WAIT			0x05
#define DRM_RBLN_CLIENT_USAGE		0x06
#define DRM_RBLN_ACQUIRE		0x07
#define DRM_RBLN_RELEASE		0x08
#define DRM_RBLN_LIST_CLIENTS		0x09
#define DRM_RBLN_RECLAIM		0x0a
#define DRM_RBLN_RESET			0x0b
#define DRM_RBLN_DEVICE_STATUS		0x0c
#define DRM_RBLN_SUBMIT_BATCH		0x0d
#define DRM_RBLN_JOB_TIMES		0x0e

#define DRM_IOCTL_RBLN_GET_PARAM \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_RBLN_GET_PARAM, struct drm_rbln_get_param)
#define DRM_IOCTL_RBLN_DEVICE_INFO \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_RBLN_DEVICE_INFO, struct drm_rbln_device_info)
#define DRM_IOCTL_RBLN_BO_CREATE \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_RBLN_BO_CREATE, struct drm_rbln_bo_create)
#define DRM_IOCTL_RBLN_BO_INFO \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_RBLN_BO_INFO, struct drm_rbln_bo_info)
#define DRM_IOCTL_RBLN_SUBMIT \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_RBLN_SUBMIT, struct drm_rbln_submit)
#define DRM_IOCTL_RBLN_WAIT \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_RBLN_WAIT, struct drm_rbln_wait)
#define DRM_IOCTL_RBLN_CLIENT_USAGE \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_RBLN_CLIENT_USAGE, struct drm_rbln_client_usage)
#define DRM_IOCTL_RBLN_ACQUIRE \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_RBLN_ACQUIRE, struct drm_rbln_acquire)
#define DRM_IOCTL_RBLN_RELEASE \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_RBLN_RELEASE, struct drm_rbln_acquire)
#define DRM_IOCTL_RBLN_LIST_CLIENTS \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_RBLN_LIST_CLIENTS, struct drm_rbln_list_clients)
#define DRM_IOCTL_RBLN_RECLAIM \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_RBLN_RECLAIM, struct drm_rbln_reclaim)
#define DRM_IOCTL_RBLN_RESET \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_RBLN_RESET, struct drm_rbln_reset)
#define DRM_IOCTL_RBLN_DEVICE_STATUS \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_RBLN_DEVICE_STATUS, struct drm_rbln_device_status)
#define DRM_IOCTL_RBLN_SUBMIT_BATCH \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_RBLN_SUBMIT_BATCH, struct drm_rbln_submit_batch)
#define DRM_IOCTL_RBLN_JOB_TIMES \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_RBLN_JOB_TIMES, struct drm_rbln_job_times)

/* Products.  Numbers are stable; 0 never names a product. */
enum drm_rbln_sku {
	DRM_RBLN_SKU_UNKNOWN	= 0,
	DRM_RBLN_SKU_ATOM	= 1,	/* ATOM+  RBLN-CA12, 1 die */
	DRM_RBLN_SKU_ATOM_MAX	= 2,	/* ATOM-Max RBLN-CA25, 1 die */
	DRM_RBLN_SKU_REBEL100	= 3,	/* Rebel100 RBLN-CR03, 4 chiplets */
	DRM_RBLN_SKU_EDU	= 4,	/* (15) QEMU's edu device, emulated: 1 chiplet */
};

/* Device state.  The numbers match the vendor driver's sysfs status codes. */
enum drm_rbln_status {
	DRM_RBLN_STATUS_READY	= 0,	/* idle and usable */
	DRM_RBLN_STATUS_BUSY	= 1,	/* running jobs */
	DRM_RBLN_STATUS_INIT	= 2,	/* being brought up */
	DRM_RBLN_STATUS_FAULT	= 3,	/* failed; needs a reset */
	DRM_RBLN_STATUS_FINISH	= 4,	/* being removed */
};

/* Engines of a chiplet.  External HDMA exists only on chiplet 0. */
enum drm_rbln_engine {
	DRM_RBLN_ENGINE_NEURAL_DMA	= 0,	/* weights into the chiplet */
	DRM_RBLN_ENGINE_TASK_DMA	= 1,	/* on-chip and chiplet-to-chiplet moves */
	DRM_RBLN_ENGINE_DEVICE_HDMA	= 2,	/* device-side host DMA */
	DRM_RBLN_ENGINE_EXTERNAL_HDMA	= 3,	/* host <-> device */
	DRM_RBLN_ENGINE_COUNT		= 4,
};

/* Capability bits (DRM_RBLN_PARAM_CAPABILITIES, drm_rbln_device_info.capabilities). */
#define DRM_RBLN_CAP_SIMULATED		(1ULL << 0)	/* simulation backend, not silicon */
#define DRM_RBLN_CAP_ACCEL_NODE		(1ULL << 1)	/* node is /dev/accel/accelN, else a DRM render node */
#define DRM_RBLN_CAP_MEMORY		(1ULL << 2)	/* BO_CREATE/BO_INFO, mmap, PRIME */
#define DRM_RBLN_CAP_DMA		(1ULL << 3)	/* SUBMIT/WAIT */
#define DRM_RBLN_CAP_FDINFO		(1ULL << 4)	/* /proc/<pid>/fdinfo has the DRM usage keys */
#define DRM_RBLN_CAP_ACQUIRE		(1ULL << 5)	/* ACQUIRE/RELEASE/LIST_CLIENTS */
#define DRM_RBLN_CAP_EVENTS		(1ULL << 6)	/* generic netlink events, below */
#define DRM_RBLN_CAP_SYNCOBJ		(1ULL << 7)	/* DRM syncobjs; SUBMIT in_syncs/out_sync */

enum drm_rbln_param {
	DRM_RBLN_PARAM_UAPI_VERSION		= 0,	/* DRM_RBLN_UAPI_VERSION of the driver */
	DRM_RBLN_PARAM_UAPI_COMPAT_VERSION	= 1,	/* oldest consumer version accepted */
	DRM_RBLN_PARAM_DEVICE_INDEX		= 2,	/* N of /dev/rblnN */
	DRM_RBLN_PARAM_SKU			= 3,	/* enum drm_rbln_sku */
	DRM_RBLN_PARAM_PCI_DEVICE_ID		= 4,
	DRM_RBLN_PARAM_CHIPLET_COUNT		= 5,
	DRM_RBLN_PARAM_CAPABILITIES		= 6,	/* DRM_RBLN_CAP_* */
	DRM_RBLN_PARAM_STATUS			= 7,	/* enum drm_rbln_status */
	DRM_RBLN_PARAM_MEMORY_TOTAL		= 8,	/* bytes; per chiplet with the flag */
	DRM_RBLN_PARAM_MEMORY_USED		= 9,	/* bytes; per chiplet with the flag */
	DRM_RBLN_PARAM_ENGINE_MASK		= 10,	/* chiplet only: bit per drm_rbln_engine */
	DRM_RBLN_PARAM_BUSY_NS			= 11,	/* total time any engine ran a job */
	DRM_RBLN_PARAM_MEMORY_PLACED		= 12,	/* bytes with backing placed; per chiplet with the flag */
	DRM_RBLN_PARAM_JOB_MAX_BYTES		= 13,	/* since 13: most bytes one job may copy */
};

/* drm_rbln_get_param.flags */
#define DRM_RBLN_GET_PARAM_CHIPLET	(1U << 0)	/* value of chiplet .chiplet */

/*
 * DRM_IOCTL_RBLN_GET_PARAM: read one number.
 * -EINVAL: unknown param, unknown flag, non-zero reserved, .chiplet set
 * without DRM_RBLN_GET_PARAM_CHIPLET, chiplet out of range, or a
 * device-wide param asked per chiplet (or the reverse).
 */
struct drm_rbln_get_param {
	__u32 param;		/* in: enum drm_rbln_param */
	__u32 flags;		/* in: DRM_RBLN_GET_PARAM_* */
	__u32 chiplet;		/* in: chiplet index with DRM_RBLN_GET_PARAM_CHIPLET, else 0 */
	__u32 reserved;		/* in: must be 0 */
	__u64 value;		/* out */
};

/*
 * DRM_IOCTL_RBLN_DEVICE_INFO: identity of the device, fixed for its lifetime.
 * Strings are NUL-terminated.  -EINVAL: non-zero flags or reserved0.
 */
struct drm_rbln_device_info {
	__u32 flags;			/* in: must be 0 */
	__u32 reserved0;		/* in: must be 0 */
	__u32 index;			/* N of /dev/rblnN */
	__u32 sku;			/* enum drm_rbln_sku */
	__u16 pci_vendor_id;		/* 0x1eff; since 15 the board's (edu: 0x1234) */
	__u16 pci_device_id;
	__u32 chiplet_count;
	__s32 numa_node;		/* -1: none */
	__u32 uapi_version;		/* same as DRM_RBLN_PARAM_UAPI_VERSION */
	__u64 memory_total;		/* bytes */
	__u64 capabilities;		/* DRM_RBLN_CAP_* */
	__u8  uuid[16];
	char  name[32];			/* "RBLN-CA12" */
	char  serial[32];
	char  pci_bus_id[16];		/* "0000:01:00.0" */
	char  firmware_version[32];
	char  driver_version[32];	/* version of rbln.ko */
	/*
	 * Since interface version 15 (older callers pass the 208 bytes
	 * above, and get them).  The PCIe link the board sits behind (for a
	 * conventional PCI board, its upstream port's): transfer rate per
	 * lane in MT/s (2500, 5000, 8000, 16000, 32000, 64000) and lanes;
	 * 0 when unknown (simulated NPUs, a board on the root bus).
	 */
	__u32 pci_link_speed_mts;
	__u32 pci_link_width;
};

/*
 * Buffer objects.  Device memory is accounted at creation against the chosen
 * chiplet (or split evenly over all chiplets when interleaved); a lazy buffer
 * gets its backing placed on first use (a DMA job or a CPU access through
 * mmap), an eager one at creation.  Host buffers are system memory that
 * External HDMA reaches; they take no device capacity.  The backing of both
 * is charged to the memory cgroup of the process that places it.
 */
#define DRM_RBLN_BO_EAGER		(1U << 0)	/* place at creation */
#define DRM_RBLN_BO_HOST		(1U << 1)	/* host memory, not device memory */
#define DRM_RBLN_BO_CREATE_FLAGS	(DRM_RBLN_BO_EAGER | DRM_RBLN_BO_HOST)
#define DRM_RBLN_BO_PLACED		(1U << 31)	/* BO_INFO only: backing exists */

#define DRM_RBLN_CHIPLET_INTERLEAVED	0xffffffffU	/* spread over all chiplets */

/*
 * DRM_IOCTL_RBLN_BO_CREATE.  Sizes are rounded up to the page size.
 * -EINVAL: zero size, unknown flags, non-zero reserved, bad chiplet (host
 * buffers take chiplet 0); -ENOSPC: not enough device memory left on the
 * chiplet(s), or no free range of device addresses that large; -E2BIG: host
 * buffer over DRM_RBLN_HOST_BO_MAX; -EBUSY: another open file holds the
 * device (DRM_IOCTL_RBLN_ACQUIRE); -ENOMEM: also when the caller's memory
 * cgroup is full (the driver's bookkeeping of a buffer is charged to it).
 *
 * Per open file limits (since interface version 13), for BO_CREATE and for
 * DRM_IOCTL_PRIME_FD_TO_HANDLE alike, module parameters of rbln.ko:
 * -EMFILE: the file holds file_max_buffers buffer handles already (default
 * 65536); -EDQUOT: with this buffer, its handles would hold more than
 * file_max_bytes bytes of buffers, device and host memory, lazy or placed
 * (default 256 GiB).  Close handles (DRM_IOCTL_GEM_CLOSE) to make room.
 *
 * Per user limits (since interface version 14), for BO_CREATE only: every
 * buffer it makes counts against the calling user (uid) from its creation
 * until it is freed, on all rbln devices together, whatever file or dma-buf
 * holds it by then: more files or exporting and closing do not escape them.
 * Inside a user namespace every uid counts as the user who created the
 * outermost namespace (its owner in the initial one), so the many uids a
 * namespace may map do not escape them either.  In a namespace root made
 * (a container runtime's) each uid is a user of its own.
 * -EMFILE: the user has user_max_buffers such buffers already (default
 * 262144); -EDQUOT: with this one they would hold more than user_max_bytes
 * bytes (default 256 GiB, a quarter of a device's mmap offsets, so no one
 * user can take them all).  The file's and the user's limits are checked
 * before any memory is reserved or placed (also since 17): a refused create
 * changes nothing.  Importing another user's dma-buf charges it no more.
 */
#define DRM_RBLN_HOST_BO_MAX		(1ULL << 30)

struct drm_rbln_bo_create {
	__u64 size;		/* in: bytes */
	__u32 flags;		/* in: DRM_RBLN_BO_* */
	__u32 chiplet;		/* in: chiplet index or DRM_RBLN_CHIPLET_INTERLEAVED */
	__u32 handle;		/* out: GEM handle; free with DRM_IOCTL_GEM_CLOSE */
	__u32 reserved;		/* in: must be 0 */
};

/*
 * DRM_IOCTL_RBLN_BO_INFO.  -ENOENT: no such handle for this file.  Since
 * interface version 13 a buffer's range of mmap offsets is made by its first
 * BO_INFO (or its first PRIME export), not at creation: -ENOSPC if the
 * device has no such range left (-ENOMEM if it could not be made).
 */
struct drm_rbln_bo_info {
	__u32 handle;		/* in */
	__u32 flags;		/* in: must be 0; out: DRM_RBLN_BO_* incl. PLACED */
	__u64 size;		/* out: bytes */
	__u64 device_address;	/* out: device memory: its address, in the window of
				 * its chiplet N (N << 40, chiplet memory long), or
				 * for interleaved buffers the window above the last
				 * chiplet's (4 << 40); ranges never overlap.  Host
				 * memory: 0 */
	__u64 mmap_offset;	/* out: offset to mmap() on the device fd */
	__u32 chiplet;		/* out: as created */
	__u32 reserved;		/* in: must be 0 */
};

/*
 * A copy done by a DMA engine.  Which buffers an engine may touch:
 *  - EXTERNAL_HDMA (chiplet 0 only): between a host buffer and device memory;
 *  - DEVICE_HDMA, NEURAL_DMA: device memory of the submitting chiplet;
 *  - TASK_DMA: device memory, one side on the submitting chiplet (gathers
 *    from and scatters to the other chiplets).
 * An interleaved buffer is on every chiplet.
 */
struct drm_rbln_copy {
	__u32 src_handle;
	__u32 dst_handle;
	__u64 src_offset;
	__u64 dst_offset;
	__u64 size;		/* bytes, non-zero */
};

#define DRM_RBLN_MAX_COPIES		4096
#define DRM_RBLN_LABEL_MAX		64	/* including the NUL */
#define DRM_RBLN_MAX_INFLIGHT		256	/* per open file: unfinished jobs plus
						 * failed ones not yet waited for */

/*
 * A DRM syncobj (DRM_IOCTL_SYNCOBJ_CREATE) a job waits for or signals: a
 * binary one (point 0) or a point of a timeline one.
 */
struct drm_rbln_sync {
	__u32 handle;		/* in: syncobj handle of this file */
	__u32 flags;		/* in: must be 0 */
	__u64 point;		/* in: timeline point, 0 for a binary syncobj */
};

#define DRM_RBLN_MAX_IN_SYNCS		64

/*
 * DRM_IOCTL_RBLN_SUBMIT: queue a job of copies on one engine of one chiplet.
 * Everything is validated before anything runs.  -EINVAL: bad engine,
 * chiplet, count, element size, flags, reserved, range or overlap rule, a
 * syncobj handle that does not exist or has no fence yet, or (since 13) more
 * bytes in all copies than DRM_RBLN_PARAM_JOB_MAX_BYTES; -ENOENT: a handle
 * not owned by this file; -EFAULT: bad pointer; -ENODEV: the chiplet is down
 * or the device is gone; -ENOSPC: this file has DRM_RBLN_MAX_INFLIGHT jobs
 * unfinished or failed and not waited for, wait for one first (before
 * interface version 13 this was -EAGAIN, which libdrm's drmIoctl() retries
 * forever: a caller built against an older version that waits for a job on
 * -EAGAIN must do the same on -ENOSPC); -ENOMEM: a
 * lazy buffer's backing could not be placed (buffers are placed at
 * submission); -EBUSY: another open file holds the device
 * (DRM_IOCTL_RBLN_ACQUIRE).
 *
 * Since interface version 10 a job starts only once the fences of its
 * in_syncs have signalled (they may come from other engines, chiplets or
 * devices); if one of them failed, the job fails with the same error without
 * running.  Since interface version 13 this holds for every kind of input: a
 * timeline point fails with the error of the fence given to that point, an
 * imported sync_file with that of its (first failed) fence, a job of the
 * same engine as any other; and a job whose inputs have all ended, some
 * failed, ends inside SUBMIT with REPORT_END as any small job may.  One
 * limit is the kernel's syncobj, not this driver's: once a later point of the
 * same timeline exists and the failed point has signalled, the kernel may
 * collapse the failed point into a signalled one without an error, so wait
 * for a point before its timeline moves on, or use a binary syncobj.
 * out_sync, if its handle is not 0, gets the job's fence: export it as a
 * sync_file (DRM_IOCTL_SYNCOBJ_HANDLE_TO_FD with
 * DRM_SYNCOBJ_HANDLE_TO_FD_FLAGS_EXPORT_SYNC_FILE) to poll() for the job.
 * Synchronisation is explicit: a job does not wait for fences others left in
 * its buffers' reservation objects (pass them as in_syncs); its own fence is
 * added there, so importers of its buffers see them busy until it ends.
 * A job that has not run when its file closes does not run: its fence (as
 * others see it through a syncobj or sync_file) fails with -ECANCELED.  When
 * the device is removed, it fails with -ENODEV, or with -ESRCH if it was
 * still waiting for its in_syncs (the kernel's scheduler drops the queue).
 * Older callers pass the 48-byte struct: no syncobjs.
 *
 * Since interface version 13 a job's copies total at most
 * DRM_RBLN_PARAM_JOB_MAX_BYTES bytes (the backend's limit: 16 MiB on the
 * simulator), so that a job ends well inside the scheduler's timeout
 * (module parameter job_timeout_ms, default 1000) and a reset stops it at
 * once: split a larger transfer into several jobs (libdevmgr's submit()
 * does).  A job still running at the timeout ends with -ETIMEDOUT about
 * job_timeout_ms plus 50 ms after it started (the engine is reset and takes
 * the next job): 50 ms is what a backend's reset is bound to, for memory it
 * reaches at full speed; the timeout's own work item may start late on a
 * loaded system.  A job over the limit is refused whatever the caller's
 * interface version: an older caller's job of more bytes fails with -EINVAL
 * (earlier drivers had no limit, and their timeout waited for a running
 * copy).
 *
 * Since interface version 11, with DRM_RBLN_SUBMIT_REPORT_END in flags: a
 * small job for an idle engine may run to its end inside SUBMIT (on the
 * simulator one of up to 16 MiB, its whole job limit; earlier drivers of
 * interface 15 stopped at 4 MiB or 64 KiB, and before that at 64 KiB: which
 * jobs do is the driver's choice, not the interface's).  Then .ended is 1 and
 * .status holds its result (as WAIT's), and the job is not kept for WAIT:
 * this report is the one report of a failure (a WAIT for its seqno returns
 * status 0).  Otherwise .ended is 0: wait as usual.  Once such a job has
 * kept its engine a few milliseconds while another file's job waits for it,
 * the driver hands the rest of it to the engine's scheduler, and .ended is
 * 0.  From then on only a fatal signal or a failed allocation (ENOMEM) fails
 * the SUBMIT, which then leaves part of the job's copies done.
 */
#define DRM_RBLN_SUBMIT_REPORT_END	(1U << 0)
/*
 * Since interface version 14: when the job ends, its device times go to this
 * file's ring for DRM_IOCTL_RBLN_JOB_TIMES (a profiler's; see there), unless
 * SUBMIT reported them (DRM_RBLN_SUBMIT_REPORT_TIMES).  Jobs without the
 * flag cost nothing and are not recorded.
 */
#define DRM_RBLN_SUBMIT_TIMES		(1U << 1)
/*
 * Since interface version 16, with DRM_RBLN_SUBMIT_TIMES and
 * DRM_RBLN_SUBMIT_REPORT_END (else -EINVAL): a job that ended inside SUBMIT
 * (.ended 1) reports its device times in .submit_ns, .start_ns, .end_ns and
 * .time_flags, as its struct drm_rbln_job_time would hold them, and leaves no
 * record in the ring; any other job is recorded there as with
 * DRM_RBLN_SUBMIT_TIMES alone.  A profiler's small jobs then cost no record
 * and no JOB_TIMES.  SUBMIT cannot see how large the caller's struct is: a
 * caller that sets this flag must pass one that reaches .reserved3, or the
 * times are lost (a batch's submit_size must reach it, else -EINVAL).  They
 * are lost too if SUBMIT fails with -EFAULT writing them back after the job
 * went in (the seqno with them); SUBMIT_BATCH checks an element can be
 * written before its job goes in.
 */
#define DRM_RBLN_SUBMIT_REPORT_TIMES	(1U << 2)
#define DRM_RBLN_SUBMIT_FLAGS		(DRM_RBLN_SUBMIT_REPORT_END | DRM_RBLN_SUBMIT_TIMES | \
					 DRM_RBLN_SUBMIT_REPORT_TIMES)

struct drm_rbln_submit {
	__u32 engine;		/* in: enum drm_rbln_engine */
	__u32 chiplet;		/* in */
	__u64 copies;		/* in: pointer to copy_count elements of copy_size bytes */
	__u32 copy_count;	/* in: 1..DRM_RBLN_MAX_COPIES */
	__u32 copy_size;	/* in: sizeof(struct drm_rbln_copy) of the caller; larger
				 * elements must have zeros beyond what the driver knows */
	__u64 label;		/* in: pointer to a NUL-terminated label for tracing, or 0 */
	__u32 flags;		/* in: DRM_RBLN_SUBMIT_* */
	__u32 reserved;		/* in: must be 0 */
	__u64 seqno;		/* out: wait for it with DRM_IOCTL_RBLN_WAIT */
	/* Since interface version 10. */
	__u64 in_syncs;		/* in: pointer to in_sync_count struct drm_rbln_sync */
	__u32 in_sync_count;	/* in: 0..DRM_RBLN_MAX_IN_SYNCS */
	__u32 reserved2;	/* in: must be 0 */
	struct drm_rbln_sync out_sync;	/* in: handle 0 for none */
	/* Since interface version 11. */
	__u32 ended;		/* out: 1 if the job ended inside SUBMIT (REPORT_END) */
	__s32 status;		/* out: its result then: 0 or a negative errno */
	/* Since interface version 16: a successful SUBMIT sets them, 0 unless
	 * REPORT_TIMES and .ended. */
	__u64 submit_ns;	/* out: its device times (struct drm_rbln_job_time) */
	__u64 start_ns;		/* out */
	__u64 end_ns;		/* out */
	__u32 time_flags;	/* out: DRM_RBLN_JOB_TIME_* */
	__u32 reserved3;	/* in: must be 0 */
};

/*
 * DRM_IOCTL_RBLN_SUBMIT_BATCH (since interface version 12): several jobs in
 * one call, such as a step's DMA across engines and chiplets.  Element i is
 * the struct drm_rbln_submit at submits + i * submit_size; each is submitted
 * exactly as DRM_IOCTL_RBLN_SUBMIT would submit it (same rules, same errors),
 * in array order, so an element's in_syncs may name the out_sync of an
 * earlier one and wait for that job.  Only the out fields of an element are
 * written (seqno, and each of ended to time_flags that submit_size covers),
 * and only of the elements submitted and of the one that stopped the batch
 * if it could be read and checked (zeros there); the rest is left as it was.
 *
 * The first element that cannot be submitted stops the batch.  If the call
 * fails, nothing was submitted.  Otherwise .submitted elements were (their
 * jobs run, and may fail, as any job), and if that is fewer than count,
 * .error holds the (negative) errno of element .submitted, like a short
 * write: a retry of the whole call would submit those jobs twice; submit the
 * rest instead.  A fatal signal, or a signal while an element waits for a
 * buffer's lock, stops a batch the same way (-EINTR).  .error is also
 * -EFAULT, with .submitted counting it, if the out fields of the last
 * submitted element could not be written (another thread unmapped them).
 *
 * -EINVAL also for a count of 0 or above DRM_RBLN_MAX_BATCH, a submit_size
 * below 48 (the first SUBMIT), above 4096 or not a multiple of 8, an element
 * with non-zero bytes beyond the struct this driver knows or with
 * DRM_RBLN_SUBMIT_REPORT_END but no room for .ended and .status (with
 * DRM_RBLN_SUBMIT_REPORT_TIMES: up to .reserved3), or flags or
 * reserved set; -ENOSPC (-EAGAIN before interface version 13), before
 * anything is submitted, if count more jobs
 * would take the file past DRM_RBLN_MAX_INFLIGHT (jobs that may end inside
 * the call count too: wait for failed ones, or submit fewer); -EFAULT: bad
 * pointer, or an element that cannot be written (checked before it is
 * submitted).
 */
#define DRM_RBLN_MAX_BATCH		64

struct drm_rbln_submit_batch {
	__u64 submits;		/* in: pointer to count elements of submit_size bytes */
	__u32 count;		/* in: 1..DRM_RBLN_MAX_BATCH */
	__u32 submit_size;	/* in: sizeof(struct drm_rbln_submit) of the caller */
	__u32 flags;		/* in: must be 0 */
	__u32 submitted;	/* out: elements submitted, from the first */
	__s32 error;		/* out: why element .submitted was not, or 0 */
	__u32 reserved;		/* in: must be 0 */
};

/*
 * Device times of one job submitted with DRM_RBLN_SUBMIT_TIMES, all in
 * CLOCK_MONOTONIC nanoseconds (clock_gettime(CLOCK_MONOTONIC) of user space):
 * submit_ns when SUBMIT had it ready, before any wait there (a job that
 * waited for nothing there, not even for another thread's job of the file,
 * and ran inside SUBMIT has submit_ns == start_ns); start_ns when its engine
 * started it (the scheduler ran it, or it ran inside SUBMIT; a job begun
 * there that handed its rest to the scheduler: when the rest ran, so the
 * part done inside SUBMIT is not in [start_ns, end_ns]; if the rest never
 * ran, when that part began); end_ns when it ended (the hardware fence's
 * timestamp).  A job that never ran on its engine (cancelled, or failed
 * because an input failed) has no DRM_RBLN_JOB_TIME_RAN and start_ns ==
 * end_ns, the moment it was ended.
 * submit_ns <= start_ns <= end_ns always.
 */
#define DRM_RBLN_JOB_TIME_RAN		(1U << 0)	/* it ran on its engine */
#define DRM_RBLN_JOB_TIME_TIMED_OUT	(1U << 1)	/* ended by the timeout (engine reset) */

struct drm_rbln_job_time {
	__u64 seqno;		/* as SUBMIT returned it */
	__u64 submit_ns;
	__u64 start_ns;
	__u64 end_ns;
	__s32 status;		/* as WAIT's: 0 or a negative errno */
	__u32 flags;		/* DRM_RBLN_JOB_TIME_* */
	__u32 chiplet;		/* as submitted */
	__u32 engine;		/* enum drm_rbln_engine */
};

/* Records a file keeps until it reads them; later ones are counted in .lost. */
#define DRM_RBLN_JOB_TIMES_RING		4096

/*
 * DRM_IOCTL_RBLN_JOB_TIMES (since interface version 14): takes the oldest
 * records of this file's ended SUBMIT_TIMES jobs out of its ring, in the
 * order they were recorded: about the order they ended, not exactly (a
 * scheduled job is recorded after its end, a job run inside SUBMIT at once),
 * so sort by .end_ns where order matters.  Only the file's own jobs are
 * there, so no privilege is
 * needed.  A job's record is there once WAIT returned for it (or once it
 * ended inside SUBMIT, unless SUBMIT reported its times:
 * DRM_RBLN_SUBMIT_REPORT_TIMES).  Fills up to .count entries of .entry_size
 * bytes (>= sizeof(struct drm_rbln_job_time), at most 4096; a larger element's tail is
 * zeroed) and sets .count to the number written, .pending to those left in
 * the ring, and .lost to the records dropped since the last call because the
 * ring held DRM_RBLN_JOB_TIMES_RING already.  -EINVAL: flags, reserved or a
 * bad entry_size; -EFAULT: bad pointer (the records not written stay).
 */
struct drm_rbln_job_times {
	__u64 entries;		/* in: pointer to count elements of entry_size bytes */
	__u32 count;		/* in: room; out: entries written */
	__u32 entry_size;	/* in: sizeof(struct drm_rbln_job_time) of the caller */
	__u32 flags;		/* in: must be 0 */
	__u32 lost;		/* out: records dropped, ring full, since the last call */
	__u32 pending;		/* out: records still in the ring */
	__u32 reserved;		/* in: must be 0 */
};

/*
 * DRM_IOCTL_RBLN_WAIT: wait for a job of this file.  Returns 0 once it has
 * completed, with its result in .status: 0 done, -ETIMEDOUT the engine hung
 * and was reset, -EIO the job failed, -ENODEV the device went away,
 * -ECANCELED its file was closing.  -ETIME: still running after timeout_ns;
 * -EINVAL: seqno never issued, flags or reserved set.  Interrupted by a
 * signal (-EINTR, or a transparent restart), timeout_ns holds the time that
 * was left, so a restarted call does not wait the full time again (since
 * interface version 9).
 */
struct drm_rbln_wait {
	__u64 seqno;		/* in */
	__s64 timeout_ns;	/* in: relative; 0 polls; out: what is left if interrupted */
	__u32 flags;		/* in: must be 0 */
	__s32 status;		/* out */
};

/*
 * DRM_IOCTL_RBLN_CLIENT_USAGE: what this open file uses, on every kernel.
 * Where DRM_RBLN_CAP_FDINFO is set the same figures are in
 * /proc/<pid>/fdinfo/<fd>: drm-client-id, drm-total-memory,
 * drm-resident-memory and drm-engine-<name> (name as in chipletN/engines).
 * -EINVAL: non-zero flags or reserved.
 */
struct drm_rbln_client_usage {
	__u32 flags;			/* in: must be 0 */
	__u32 reserved;			/* in: must be 0 */
	__u64 client_id;		/* out: unique per open file, as drm-client-id */
	__u64 memory_total;		/* out: bytes of all buffers of this file */
	__u64 memory_resident;		/* out: bytes of those with backing placed */
	__u64 device_memory;		/* out: bytes of device memory they take */
	__u64 engine_busy_ns[DRM_RBLN_ENGINE_COUNT];	/* out: by engine kind, all chiplets */
};

/*
 * DRM_IOCTL_RBLN_ACQUIRE: this open file takes the device for itself, until
 * DRM_IOCTL_RBLN_RELEASE or until the file is closed (a dead process's files
 * close with it).  Meanwhile every other open file's BO_CREATE and SUBMIT
 * fail with -EBUSY (queries, WAIT and the buffers they already have still
 * work; jobs they submitted before the acquisition still run).  Acquiring again is a no-op.  -EBUSY: another open file holds it
 * (LIST_CLIENTS says which).  RELEASE: -EINVAL if this file does not
 * hold it.  Both: -EINVAL for non-zero flags or reserved.
 */
struct drm_rbln_acquire {
	__u32 flags;		/* in: must be 0 */
	__u32 reserved;		/* in: must be 0 */
};

/* drm_rbln_client.flags */
#define DRM_RBLN_CLIENT_ACQUIRED	(1U << 0)	/* holds the device */
#define DRM_RBLN_CLIENT_STALE		(1U << 1)	/* the process that opened it has exited */
#define DRM_RBLN_CLIENT_SELF		(1U << 2)	/* the caller's own file */
#define DRM_RBLN_CLIENT_REVOKED		(1U << 3)	/* reclaimed: its calls fail with -ENODEV */

/* One open file of the device, as DRM_IOCTL_RBLN_LIST_CLIENTS reports it. */
struct drm_rbln_client {
	__u64 client_id;	/* as drm-client-id / CLIENT_USAGE */
	__u32 creator_pid;	/* process that opened it, in the caller's pid namespace; 0: not visible */
	__u32 uid;		/* its owner, in the caller's user namespace */
	__u32 flags;		/* DRM_RBLN_CLIENT_* */
	__u32 reserved;
	__u64 device_memory;	/* bytes of device memory of the buffers its handles hold
				 * (a buffer shared by two files counts for both) */
	__u64 idle_ns;		/* since it last allocated, submitted or acquired (to a clock tick) */
	char  creator_comm[16];	/* command name of the creator */
};

/*
 * DRM_IOCTL_RBLN_LIST_CLIENTS: the open files of the device.  Callers with
 * CAP_SYS_ADMIN see all of them, others only their own user's.  Fills up to
 * .count entries, element size .entry_size (>= sizeof(struct
 * drm_rbln_client); a larger element's tail is zeroed), and sets .count to
 * the number of clients visible, which may be larger: call again with room.
 * -EINVAL: flags, reserved, or entry_size too small or over 4096.
 */
struct drm_rbln_list_clients {
	__u32 flags;		/* in: must be 0 */
	__u32 count;		/* in: room in .entries; out: clients visible */
	__u64 entries;		/* in: pointer to the array */
	__u32 entry_size;	/* in: sizeof(struct drm_rbln_client) of the caller */
	__u32 reserved;		/* in: must be 0 */
};

/* drm_rbln_reclaim.flags */
#define DRM_RBLN_RECLAIM_FORCE		(1U << 0)	/* also a client that is not stale (CAP_SYS_ADMIN) */

/*
 * DRM_IOCTL_RBLN_RECLAIM: revoke another client: its queued jobs are
 * cancelled (a running job finishes first), its acquisition dropped, the
 * buffers only it holds, device and host memory alike, unmapped (later CPU
 * access: SIGBUS) and freed, its handles deleted, and every later rbln ioctl
 * on its file fails with -ENODEV.  Buffers it shares through PRIME stay with
 * the other holders.  Callers with CAP_SYS_ADMIN may reclaim any client,
 * others only their own user's.  -ENOENT: no such client, or one of another
 * user for a caller without CAP_SYS_ADMIN (as LIST_CLIENTS, it does not tell
 * them apart); -EPERM: FORCE without CAP_SYS_ADMIN; -EBUSY: the client is not
 * stale and FORCE was not given; -EINVAL: the caller's own client, unknown
 * flags or reserved set; -EALREADY: already revoked (by RECLAIM or RESET).
 */
struct drm_rbln_reclaim {
	__u64 client_id;	/* in */
	__u32 flags;		/* in: DRM_RBLN_RECLAIM_* */
	__u32 reserved;		/* in: must be 0 */
	__u64 freed_bytes;	/* out: device memory returned (host memory not counted) */
};

/*
 * DRM_IOCTL_RBLN_DEVICE_STATUS: every changing figure of the device in one
 * call, the same values as its sysfs attributes (for monitors that poll many
 * devices).  -EINVAL: non-zero flags or reserved.
 */
struct drm_rbln_device_status {
	__u32 flags;			/* in: must be 0 */
	__u32 status;			/* enum drm_rbln_status */
	__s32 temperature_mc;		/* millidegrees Celsius */
	__u32 utilization;		/* percent, last window of >= 1 s */
	__u64 power_uw;			/* microwatts */
	__u32 pstate;			/* P<n> */
	__u32 reserved;			/* in: must be 0 */
	__u64 memory_total;		/* bytes */
	__u64 memory_used;
	__u64 memory_placed;
	__u64 busy_ns;
};

/* drm_rbln_reset.flags */
#define DRM_RBLN_RESET_FORCE		(1U << 0)	/* revoke the other open files first */

/*
 * DRM_IOCTL_RBLN_RESET (CAP_SYS_ADMIN): brings the device back to READY:
 * engines and chiplets up, injected faults cleared.  -EBUSY while other open
 * files exist (LIST_CLIENTS says which) unless DRM_RBLN_RESET_FORCE, which
 * revokes them as RECLAIM does.  -EPERM without CAP_SYS_ADMIN; -EINVAL for
 * unknown flags or reserved set.
 */
struct drm_rbln_reset {
	__u32 flags;		/* in: DRM_RBLN_RESET_* */
	__u32 revoked;		/* in: 0; out: open files revoked */
};

/*
 * Driver events: generic netlink family RBLN_GENL_NAME, multicast group
 * RBLN_GENL_MCGRP_EVENTS, one RBLN_GENL_CMD_EVENT message per event with
 * RBLN_GENL_ATTR_EVENT (enum rbln_genl_event) and RBLN_GENL_ATTR_DEVICE (the
 * NPU index), plus the attributes that apply to that event.  Events name
 * other users' processes, so only sockets with CAP_SYS_ADMIN may join the
 * group (others: -EPERM); on a kernel that cannot restrict a group, events
 * carry no CLIENT or PID.
 */
#define RBLN_GENL_NAME			"rbln"
#define RBLN_GENL_VERSION		1
#define RBLN_GENL_MCGRP_EVENTS		"events"

enum rbln_genl_cmd {
	RBLN_GENL_CMD_UNSPEC,
	RBLN_GENL_CMD_EVENT,
};

enum rbln_genl_attr {
	RBLN_GENL_ATTR_UNSPEC,
	RBLN_GENL_ATTR_PAD,
	RBLN_GENL_ATTR_EVENT,		/* u32: enum rbln_genl_event */
	RBLN_GENL_ATTR_DEVICE,		/* u32: NPU index */
	RBLN_GENL_ATTR_CHIPLET,		/* u32 */
	RBLN_GENL_ATTR_ENGINE,		/* u32: enum drm_rbln_engine */
	RBLN_GENL_ATTR_CLIENT,		/* u64: client id */
	RBLN_GENL_ATTR_PID,		/* u32: creator of the client, in the initial pid namespace */
	RBLN_GENL_ATTR_BYTES,		/* u64: memory freed by a reclaim */
	__RBLN_GENL_ATTR_MAX,
};
#define RBLN_GENL_ATTR_MAX		(__RBLN_GENL_ATTR_MAX - 1)

enum rbln_genl_event {
	RBLN_GENL_EVENT_DEVICE_ADDED	= 1,
	RBLN_GENL_EVENT_DEVICE_REMOVED	= 2,
	RBLN_GENL_EVENT_ACQUIRED	= 3,	/* + CLIENT, PID */
	RBLN_GENL_EVENT_RELEASED	= 4,	/* + CLIENT, PID */
	RBLN_GENL_EVENT_RECLAIMED	= 5,	/* + CLIENT, PID, BYTES */
	RBLN_GENL_EVENT_JOB_TIMEOUT	= 6,	/* + CHIPLET, ENGINE, CLIENT: the engine was reset */
	RBLN_GENL_EVENT_FAULT		= 7,	/* the device's status became FAULT */
	RBLN_GENL_EVENT_MEMORY_ERROR	= 8,	/* + CHIPLET */
	RBLN_GENL_EVENT_RESET		= 9,	/* the device was reset */
};

#if defined(__cplusplus)
}
#endif

#endif /* _UAPI_RBLN_DRM_H_ */
