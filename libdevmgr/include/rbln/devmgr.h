/* SPDX-License-Identifier: MIT */
/*
 * libdevmgr C API: the stable ABI for runtimes written in any language.
 *
 * Handles are opaque.  Every call returns an rbln_status; on failure
 * rbln_last_error() gives a message for this thread that names the device,
 * the size and the likely cause.
 *
 * Structs filled in by the library start with a struct_size the caller sets
 * to sizeof() of the struct it was built with.  Structs only grow at the end,
 * so a caller's struct may be older (smaller) or newer (larger) than the
 * library's: the library writes only the common prefix, zeroes the tail a
 * newer caller has beyond it, and walks arrays with the caller's element size.
 * A struct_size below the struct's first published size is refused.  In an
 * array the caller sets the first element's struct_size, which is the
 * element size; the library sets every element's struct_size to it.
 *
 * Threads: every call may be made from any thread, and calls on one handle
 * from several threads at once, except where a declaration says otherwise
 * (closing or freeing a handle, an event listener).  rbln_last_error() is
 * the calling thread's.  docs/libdevmgr-c.md has the rules in full.
 *
 * Soname librbln_devmgr.so.0; pkg-config rbln-devmgr.
 */
#ifndef RBLN_DEVMGR_H
#define RBLN_DEVMGR_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__)
#define RBLN_API __attribute__((visibility("default")))
#else
#define RBLN_API
#endif

/* Status codes.  Numbers are stable. */
typedef enum rbln_status {
	RBLN_OK = 0,
	RBLN_ERR_INVALID_ARGUMENT = 1,	/* a bad value; the message names it */
	RBLN_ERR_NOT_FOUND = 2,		/* no such client, logical device or file; an NPU
					   that is not there is RBLN_ERR_NO_DEVICE */
	RBLN_ERR_NO_DEVICE = 3,		/* no such NPU: removed (through a handle or by
					   spec alike), never there, its node not given
					   to this process; or the job's chiplet is down */
	RBLN_ERR_PERMISSION = 4,	/* not allowed to open the device (group rbln?) */
	RBLN_ERR_DEVICE_MEMORY = 5,	/* out of device memory, or stale allocations hold it */
	RBLN_ERR_HOST_MEMORY = 6,	/* the host could not provide memory */
	RBLN_ERR_BUSY = 7,		/* mostly: another process holds the NPU
					   (rbln_register, rbln_device_acquire, and then
					   allocating or submitting through another file),
					   the message names it; rbln_device_reset with other
					   files open; rbln_device_reclaim of a client that
					   is alive; or this file has 256 jobs unfinished or
					   not waited for: wait for one */
	RBLN_ERR_TIMEOUT = 8,		/* a wait timed out; the job still runs */
	RBLN_ERR_ENGINE_HUNG = 9,	/* the job's engine hung and was reset */
	RBLN_ERR_JOB_FAILED = 10,	/* the job failed on the device */
	RBLN_ERR_CANCELED = 11,		/* the job was cancelled */
	RBLN_ERR_SYSTEM = 12,		/* another system error; see the message */
	RBLN_ERR_ABI_MISMATCH = 13,	/* driver and library interfaces do not match */
	RBLN_ERR_DRIVER_NOT_LOADED = 14, /* rbln.ko is not loaded (no /sys/module/rbln) */
	RBLN_ERR_NOT_SUPPORTED = 15,	/* the driver or kernel lacks the feature */
} rbln_status;

typedef enum rbln_engine {
	RBLN_ENGINE_NEURAL_DMA = 0,
	RBLN_ENGINE_TASK_DMA = 1,
	RBLN_ENGINE_DEVICE_HDMA = 2,
	RBLN_ENGINE_EXTERNAL_HDMA = 3,	/* host <-> device, chiplet 0 only */
} rbln_engine;

#define RBLN_CHIPLET_INTERLEAVED	0xffffffffu

/* rbln_buffer_alloc() flags */
#define RBLN_ALLOC_EAGER	(1u << 0)	/* place now; default: lazy, on first use */
#define RBLN_ALLOC_HOST		(1u << 1)	/* host memory for External HDMA */

typedef struct rbln_device rbln_device;
typedef struct rbln_buffer rbln_buffer;
typedef struct rbln_job rbln_job;

typedef struct rbln_device_info {
	size_t struct_size;		/* in: sizeof(rbln_device_info) */
	uint32_t index;			/* NPU number: N of /dev/rblnN */
	uint32_t chiplet_count;
	uint64_t memory_total;		/* bytes */
	uint64_t capabilities;		/* DRM_RBLN_CAP_* of rbln_drm.h */
	char name[32];			/* "RBLN-CR03" */
	char uuid[40];
	char pci_bus_id[16];
	char driver_version[32];
	/* Added after the first version (a caller built before gets none of them): */
	char firmware_version[32];
	char serial[32];
	int32_t numa_node;		/* -1: none */
	uint32_t reserved;
	/* Driver interface 15: the PCIe link (a conventional board: its upstream
	 * port's), MT/s per lane and lanes; 0 unknown (simulated NPUs). */
	uint32_t pci_link_speed_mts;
	uint32_t pci_link_width;
#ifdef RBLN_DEVMGR_ABI_TEST_GROWTH	/* only the ABI test's build: a field added later */
	uint64_t grown;
#endif
} rbln_device_info;

typedef struct rbln_memory_usage {
	size_t struct_size;		/* in: sizeof(rbln_memory_usage) */
	uint64_t total;			/* bytes */
	uint64_t used;			/* taken by buffers, placed or not */
	uint64_t placed;		/* with backing */
#ifdef RBLN_DEVMGR_ABI_TEST_GROWTH
	uint64_t grown;
#endif
} rbln_memory_usage;

/*
 * One copy of a job.  An array of them: the caller sets copies[0].struct_size,
 * the element size, and every element's struct_size to the same value.
 * (Callers linked before struct_size existed, against RBLN_DEVMGR_0's
 * rbln_submit/rbln_submit_after/rbln_submit_batch, keep their 40-byte
 * element without it: those symbol versions stay.)
 */
typedef struct rbln_copy {
	size_t struct_size;		/* in: sizeof(rbln_copy) */
	const rbln_buffer *src;
	const rbln_buffer *dst;
	uint64_t src_offset;
	uint64_t dst_offset;
	uint64_t size;
#ifdef RBLN_DEVMGR_ABI_TEST_GROWTH
	uint64_t grown;
#endif
} rbln_copy;

/* The library's version, "MAJOR.MINOR.PATCH" (the project version).  These three: any thread. */
RBLN_API const char *rbln_library_version(void);
RBLN_API const char *rbln_status_string(rbln_status status);
/* The message of this thread's last failed call ("" if none). */
RBLN_API const char *rbln_last_error(void);

/* Opens NPU <index> through the node this process was given: its accel or
 * render node, or /dev/rbln<index>. */
RBLN_API rbln_status rbln_device_open(unsigned index, rbln_device **out);
/* Opens a device node by path (/dev/accel/accel0, /dev/rbln/by-uuid/...). */
RBLN_API rbln_status rbln_device_open_path(const char *path, rbln_device **out);
/* Buffers of the device stay valid after it is closed.  Not while another
 * thread uses @device. */
RBLN_API void rbln_device_close(rbln_device *device);
RBLN_API rbln_status rbln_device_get_info(const rbln_device *device, rbln_device_info *info);
/* chiplet -1: the whole device. */
RBLN_API rbln_status rbln_device_memory(const rbln_device *device, int chiplet,
					rbln_memory_usage *usage);

RBLN_API rbln_status rbln_buffer_alloc(rbln_device *device, uint64_t size, uint32_t chiplet,
				       uint32_t flags, rbln_buffer **out);
RBLN_API rbln_status rbln_buffer_import(rbln_device *device, int dmabuf_fd, rbln_buffer **out);
/* Not while another thread uses @buffer (a job using it may still run). */
RBLN_API void rbln_buffer_free(rbln_buffer *buffer);
RBLN_API uint64_t rbln_buffer_size(const rbln_buffer *buffer);
/* CPU view of the buffer, valid until it is freed; places a lazy buffer.
 * Mapped once: every call, from any thread, gives the same pointer. */
RBLN_API rbln_status rbln_buffer_map(rbln_buffer *buffer, void **ptr);
/* A dma-buf fd for another device or process; the caller closes it. */
RBLN_API rbln_status rbln_buffer_export(const rbln_buffer *buffer, int *dmabuf_fd);

/* Queues copies on one engine of one chiplet.  label (may be NULL) shows in traces. */
RBLN_API rbln_status rbln_submit(rbln_device *device, rbln_engine engine, uint32_t chiplet,
				 const rbln_copy *copies, size_t count, const char *label,
				 rbln_job **out);
/*
 * Waits up to timeout_ns (0 polls).  RBLN_ERR_TIMEOUT: still running.
 * Otherwise the job's result, the same on every later wait: a failed job
 * stays failed (status and message).  Several threads may wait for one job;
 * their waits take turns, each within its own timeout.
 */
RBLN_API rbln_status rbln_job_wait(const rbln_job *job, int64_t timeout_ns);
RBLN_API uint64_t rbln_job_seqno(const rbln_job *job);
/* Forgets the handle; the job itself runs to completion.  Not while another
 * thread waits for it. */
RBLN_API void rbln_job_free(rbln_job *job);

/* Most jobs one job may wait for (rbln_submit_after). */
#define RBLN_SUBMIT_MAX_AFTER	64

/*
 * As rbln_submit, but the job starts only once the @after_count jobs of
 * @after have ended; they may be of other devices.  If one of them failed,
 * this job fails with the same status without running.  More than
 * RBLN_SUBMIT_MAX_AFTER: RBLN_ERR_INVALID_ARGUMENT; a driver without
 * syncobjs (interface < 10): RBLN_ERR_NOT_SUPPORTED.
 */
RBLN_API rbln_status rbln_submit_after(rbln_device *device, rbln_engine engine, uint32_t chiplet,
				       const rbln_copy *copies, size_t count, const char *label,
				       const rbln_job *const *after, size_t after_count,
				       rbln_job **out);
/* Most jobs of one rbln_submit_batch. */
#define RBLN_SUBMIT_MAX_BATCH	64

/*
 * One job of rbln_submit_batch: what rbln_submit_after takes, and the jobs
 * of the same batch before it that it waits for, by their index.
 */
typedef struct rbln_job_desc {
	size_t struct_size;		/* in: sizeof(rbln_job_desc), the same in every element */
	rbln_engine engine;
	uint32_t chiplet;
	const rbln_copy *copies;
	size_t copy_count;
	const char *label;		/* may be NULL */
	const rbln_job *const *after;	/* jobs submitted earlier, of any device */
	size_t after_count;
	const uint32_t *after_batch;	/* indices of earlier jobs of this batch */
	size_t after_batch_count;
} rbln_job_desc;

/*
 * Submits @count jobs in order with one system call (drivers before
 * interface 12: one each), as rbln_submit_after would one by one; jobs[i]
 * gets job i, which the caller frees.  If job k is refused, the status and
 * message are its, jobs 0..k-1 were submitted and run (jobs[0..k-1] set),
 * and jobs[k..] are NULL.  *submitted (if not NULL) is how many were.
 */
RBLN_API rbln_status rbln_submit_batch(rbln_device *device, const rbln_job_desc *descs,
				       size_t count, rbln_job **jobs, size_t *submitted);

/*
 * A new sync_file fd for the job, which the caller closes: poll() and epoll
 * report POLLIN once the job has ended, successfully or not (rbln_job_wait
 * then gives its result).  RBLN_ERR_NOT_SUPPORTED on drivers without syncobjs.
 */
RBLN_API rbln_status rbln_job_fd(const rbln_job *job, int *fd);

/* ---- Finding NPUs and this process's logical devices ---- */

typedef struct rbln_npu_info {
	size_t struct_size;		/* in: sizeof(rbln_npu_info) */
	uint32_t index;			/* N of /dev/rblnN */
	uint32_t chiplet_count;
	uint64_t memory_total;
	int node_present;		/* 0 when /dev has no node of it (a container not given it) */
	char node[64];			/* /dev/accel/accelM or /dev/dri/renderDM, else /dev/rblnN */
	char name[32];
	char uuid[40];
	char pci_bus_id[16];
	char status[16];		/* READY, BUSY, INIT, FAULT, FINISH */
#ifdef RBLN_DEVMGR_ABI_TEST_GROWTH
	uint64_t grown;
#endif
} rbln_npu_info;

/* NPUs on this host in PCI bus order; info is the i-th of them, as this call
 * enumerates again (an NPU added or removed in between shifts them: use
 * rbln_npu_list for a snapshot, or rbln_npu_find by uuid for a stable name).
 * Past the end: RBLN_ERR_NO_DEVICE.  Any thread. */
RBLN_API rbln_status rbln_npu_count(size_t *count);
RBLN_API rbln_status rbln_npu_get(size_t i, rbln_npu_info *info);

/*
 * A snapshot of the NPUs on this host, taken once: its count and entries stay
 * as they were, whatever is plugged in or out afterwards, until it is freed.
 * An entry's NPU may since have gone: opening it then fails with
 * RBLN_ERR_NO_DEVICE.  Any thread may read a list; free it once.
 */
typedef struct rbln_npu_list rbln_npu_list;
RBLN_API rbln_status rbln_npu_list_take(rbln_npu_list **out);
RBLN_API size_t rbln_npu_list_count(const rbln_npu_list *list);
/* Past the end: RBLN_ERR_NO_DEVICE. */
RBLN_API rbln_status rbln_npu_list_get(const rbln_npu_list *list, size_t i, rbln_npu_info *info);
RBLN_API void rbln_npu_list_free(rbln_npu_list *list);

/*
 * Logical devices of this process (RBLN_VISIBLE_DEVICES, RBLN_NPUS_PER_DEVICE,
 * RBLN_DEVICE_MAP applied).  Never fails on configuration: count 0 and a
 * warning on stderr; rbln_register() then gives the full error.
 */
RBLN_API size_t rbln_logical_device_count(void);
/* The "Logical Device | Physical NPU IDs | Status" table (and warnings),
 * NUL-terminated and cut to size; returns the length it needs without the NUL. */
RBLN_API size_t rbln_device_summary(char *buffer, size_t size);

/* ---- Registration, clients, reclaim ---- */

typedef struct rbln_registration rbln_registration;

/* Acquires every physical NPU of logical device @logical_id, or none. */
RBLN_API rbln_status rbln_register(unsigned logical_id, rbln_registration **out);
/* Not while another thread uses @registration. */
RBLN_API void rbln_registration_free(rbln_registration *registration);

RBLN_API rbln_status rbln_device_acquire(rbln_device *device);
RBLN_API rbln_status rbln_device_release(rbln_device *device);

typedef struct rbln_client_info {
	size_t struct_size;		/* in: sizeof(rbln_client_info) */
	uint64_t client_id;
	uint32_t creator_pid;
	uint32_t uid;
	int acquired, stale, self, revoked;
	uint64_t device_memory;
	uint64_t idle_ns;
	char creator_comm[16];
#ifdef RBLN_DEVMGR_ABI_TEST_GROWTH
	uint64_t grown;
#endif
} rbln_client_info;

/*
 * Fills up to @capacity entries; *count: how many exist.  The caller sets
 * clients[0].struct_size, which is also the element size of the array; the
 * library sets each filled element's struct_size to it.
 */
RBLN_API rbln_status rbln_device_clients(const rbln_device *device, rbln_client_info *clients,
					 size_t capacity, size_t *count);
/* Revokes a stale client (force: any, root only); *freed_bytes may be NULL. */
RBLN_API rbln_status rbln_device_reclaim(rbln_device *device, uint64_t client_id, int force,
					 uint64_t *freed_bytes);

/*
 * (Root) back to READY: engines, chiplets, injected faults cleared.
 * RBLN_ERR_BUSY while other files have it open (the message names their
 * processes) unless @force, which revokes them; *revoked (may be NULL): how
 * many were.
 */
RBLN_API rbln_status rbln_device_reset(rbln_device *device, int force, unsigned *revoked);

/* What this open file uses (DRM_IOCTL_RBLN_CLIENT_USAGE). */
typedef struct rbln_client_usage {
	size_t struct_size;		/* in: sizeof(rbln_client_usage) */
	uint64_t client_id;
	uint64_t memory_total;		/* bytes of its buffers, host and device */
	uint64_t memory_resident;	/* of those, with backing */
	uint64_t device_memory;		/* device memory it holds */
	uint64_t engine_busy_ns[4];	/* by rbln_engine */
#ifdef RBLN_DEVMGR_ABI_TEST_GROWTH
	uint64_t grown;
#endif
} rbln_client_usage;

RBLN_API rbln_status rbln_device_usage(const rbln_device *device, rbln_client_usage *usage);

/* ---- Lookup, status and engine figures ---- */

/* Finds an NPU by index ("1"), uuid or PCI bus id ("0000:02:00.0"). */
RBLN_API rbln_status rbln_npu_find(const char *spec, rbln_npu_info *info);

typedef struct rbln_device_status {
	size_t struct_size;		/* in: sizeof(rbln_device_status) */
	char status[16];		/* READY, BUSY, INIT, FAULT, FINISH */
	int32_t temperature_mc;		/* millidegrees Celsius */
	uint32_t pstate;		/* P-state: 2 working, 14 idle */
	double power_w;
	uint32_t utilization;		/* percent busy in the last sampling window */
	uint32_t reserved;
	uint64_t memory_total, memory_used, memory_placed;	/* bytes */
	uint64_t busy_ns;		/* time any engine ran a job */
#ifdef RBLN_DEVMGR_ABI_TEST_GROWTH
	uint64_t grown;
#endif
} rbln_device_status;

/* The changing figures of an open device, in one ioctl. */
RBLN_API rbln_status rbln_device_get_status(const rbln_device *device, rbln_device_status *status);
/* The same figures of NPU @spec from sysfs, without opening it (works outside
 * group rbln).  An NPU removed before or while they are read is
 * RBLN_ERR_NO_DEVICE, never zeros. */
RBLN_API rbln_status rbln_npu_get_status(const char *spec, rbln_device_status *status);

typedef struct rbln_engine_figures {
	size_t struct_size;		/* in: sizeof(rbln_engine_figures) */
	uint32_t chiplet;
	rbln_engine engine;
	uint64_t busy_ns;		/* time the engine spent running jobs */
	uint32_t chiplet_engine_resets;	/* engine resets of its chiplet */
	uint32_t reserved;
#ifdef RBLN_DEVMGR_ABI_TEST_GROWTH
	uint64_t grown;
#endif
} rbln_engine_figures;

/*
 * One entry per engine present on each chiplet of NPU @spec, chiplet by
 * chiplet; *count: how many exist.  engines[0].struct_size is the element
 * size, which the library puts in each filled element.
 */
RBLN_API rbln_status rbln_npu_engines(const char *spec, rbln_engine_figures *engines,
				      size_t capacity, size_t *count);

/* ---- Driver events ---- */

typedef struct rbln_event_listener rbln_event_listener;

typedef enum rbln_event_type {
	RBLN_EVENT_DEVICE_ADDED = 1,
	RBLN_EVENT_DEVICE_REMOVED = 2,
	RBLN_EVENT_ACQUIRED = 3,
	RBLN_EVENT_RELEASED = 4,
	RBLN_EVENT_RECLAIMED = 5,
	RBLN_EVENT_JOB_TIMEOUT = 6,
	RBLN_EVENT_FAULT = 7,
	RBLN_EVENT_MEMORY_ERROR = 8,
	RBLN_EVENT_RESET = 9,
	/* Not the driver's: events were dropped (the socket's buffer overflowed,
	 * ENOBUFS); device is UINT32_MAX.  Re-read the devices you follow. */
	RBLN_EVENT_LOST = 0x10000,
} rbln_event_type;

/* Absent attributes are -1 (chiplet, engine, pid) or 0 (client, bytes). */
typedef struct rbln_event {
	size_t struct_size;		/* in: sizeof(rbln_event) */
	rbln_event_type type;
	uint32_t device;
	int32_t chiplet, engine, pid;
	uint64_t client, bytes;
#ifdef RBLN_DEVMGR_ABI_TEST_GROWTH
	uint64_t grown;
#endif
} rbln_event;

/* A listener is for one thread at a time (rbln_event_next reads its socket). */
RBLN_API rbln_status rbln_event_listener_open(rbln_event_listener **out);
RBLN_API void rbln_event_listener_close(rbln_event_listener *listener);
RBLN_API int rbln_event_listener_fd(const rbln_event_listener *listener);
/* Waits up to timeout_ms; RBLN_ERR_TIMEOUT if nothing came. */
RBLN_API rbln_status rbln_event_next(rbln_event_listener *listener, int timeout_ms,
				     rbln_event *event);

/*
 * The profiler (rbln/profile.hpp): a profiled region is one run, written as
 * rbln_{date}_{time}_N.pb into @output_dir (NULL: RBLN_PROFILER_DIR, else the
 * current directory) when it ends; RBLN_PROFILER=1 profiles the whole
 * process without any call.  A forked child names its files
 * rbln_{date}_{time}_pid{pid}_N.pb.  rbln_profile_end writes the run's file and puts
 * its path (empty if it recorded no job) into @path, @path_size bytes.
 */
RBLN_API rbln_status rbln_profile_begin(const char *output_dir, unsigned *run);
RBLN_API rbln_status rbln_profile_end(unsigned run, char *path, size_t path_size);
/* "i{instance}_{sequence}_W{workload}" into @buf: the label prefix of a workload's jobs. */
RBLN_API rbln_status rbln_profile_label(unsigned instance, unsigned sequence, unsigned workload,
					char *buf, size_t buf_size);

#ifdef __cplusplus
}
#endif

#endif /* RBLN_DEVMGR_H */
