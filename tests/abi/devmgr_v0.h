/* SPDX-License-Identifier: MIT */
/*
 * FROZEN: rbln/devmgr.h as first published (soname 0), never to be edited.
 * The ABI growth test compiles an "old client" against it and runs it with
 * the current library built with grown structs.
 *
 * libdevmgr C API: the stable ABI for runtimes written in any language.
 *
 * Handles are opaque.  Every call returns an rbln_status; on failure
 * rbln_last_error() gives a message for this thread that names the device,
 * the size and the likely cause.  Structs that are filled in by the library
 * start with a struct_size the caller sets, so they can grow.
 *
 * Soname librbln_devmgr.so.0; pkg-config rbln-devmgr.
 */
#ifndef RBLN_DEVMGR_V0_H
#define RBLN_DEVMGR_V0_H

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
	RBLN_ERR_NOT_FOUND = 2,		/* no such device node or buffer */
	RBLN_ERR_NO_DEVICE = 3,		/* the device was removed or the chiplet is down */
	RBLN_ERR_PERMISSION = 4,	/* not allowed to open the device (group rbln?) */
	RBLN_ERR_DEVICE_MEMORY = 5,	/* out of device memory, or stale allocations hold it */
	RBLN_ERR_HOST_MEMORY = 6,	/* the host could not provide memory */
	RBLN_ERR_BUSY = 7,		/* too many jobs in flight; wait for one */
	RBLN_ERR_TIMEOUT = 8,		/* a wait timed out; the job still runs */
	RBLN_ERR_ENGINE_HUNG = 9,	/* the job's engine hung and was reset */
	RBLN_ERR_JOB_FAILED = 10,	/* the job failed on the device */
	RBLN_ERR_CANCELED = 11,		/* the job was cancelled */
	RBLN_ERR_SYSTEM = 12,		/* another system error; see the message */
	RBLN_ERR_ABI_MISMATCH = 13,	/* driver and library interfaces do not match */
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
} rbln_device_info;

typedef struct rbln_memory_usage {
	size_t struct_size;		/* in: sizeof(rbln_memory_usage) */
	uint64_t total;			/* bytes */
	uint64_t used;			/* taken by buffers, placed or not */
	uint64_t placed;		/* with backing */
} rbln_memory_usage;

typedef struct rbln_copy {
	const rbln_buffer *src;
	const rbln_buffer *dst;
	uint64_t src_offset;
	uint64_t dst_offset;
	uint64_t size;
} rbln_copy;

RBLN_API const char *rbln_status_string(rbln_status status);
/* The message of this thread's last failed call ("" if none). */
RBLN_API const char *rbln_last_error(void);

/* Opens /dev/rbln<index>. */
RBLN_API rbln_status rbln_device_open(unsigned index, rbln_device **out);
/* Opens a device node by path (/dev/accel/accel0, /dev/rbln/by-uuid/...). */
RBLN_API rbln_status rbln_device_open_path(const char *path, rbln_device **out);
/* Buffers of the device stay valid after it is closed. */
RBLN_API void rbln_device_close(rbln_device *device);
RBLN_API rbln_status rbln_device_get_info(const rbln_device *device, rbln_device_info *info);
/* chiplet -1: the whole device. */
RBLN_API rbln_status rbln_device_memory(const rbln_device *device, int chiplet,
					rbln_memory_usage *usage);

RBLN_API rbln_status rbln_buffer_alloc(rbln_device *device, uint64_t size, uint32_t chiplet,
				       uint32_t flags, rbln_buffer **out);
RBLN_API rbln_status rbln_buffer_import(rbln_device *device, int dmabuf_fd, rbln_buffer **out);
RBLN_API void rbln_buffer_free(rbln_buffer *buffer);
RBLN_API uint64_t rbln_buffer_size(const rbln_buffer *buffer);
/* CPU view of the buffer, valid until it is freed; places a lazy buffer. */
RBLN_API rbln_status rbln_buffer_map(rbln_buffer *buffer, void **ptr);
/* A dma-buf fd for another device or process; the caller closes it. */
RBLN_API rbln_status rbln_buffer_export(const rbln_buffer *buffer, int *dmabuf_fd);

/* Queues copies on one engine of one chiplet.  label (may be NULL) shows in traces. */
RBLN_API rbln_status rbln_submit(rbln_device *device, rbln_engine engine, uint32_t chiplet,
				 const rbln_copy *copies, size_t count, const char *label,
				 rbln_job **out);
/*
 * Waits up to timeout_ns (0 polls).  RBLN_ERR_TIMEOUT: still running.
 * Otherwise the job's result; a failure is reported once, later waits
 * return RBLN_OK.
 */
RBLN_API rbln_status rbln_job_wait(const rbln_job *job, int64_t timeout_ns);
RBLN_API uint64_t rbln_job_seqno(const rbln_job *job);
/* Forgets the handle; the job itself runs to completion. */
RBLN_API void rbln_job_free(rbln_job *job);

/* ---- Finding NPUs and this process's logical devices ---- */

typedef struct rbln_npu_info {
	size_t struct_size;		/* in: sizeof(rbln_npu_info) */
	uint32_t index;			/* N of /dev/rblnN */
	uint32_t chiplet_count;
	uint64_t memory_total;
	int node_present;		/* 0 when /dev lacks the node (a container not given it) */
	char node[64];			/* /dev/accel/accelM or /dev/dri/renderDM */
	char name[32];
	char uuid[40];
	char pci_bus_id[16];
	char status[16];		/* READY, BUSY, INIT, FAULT, FINISH */
} rbln_npu_info;

/* NPUs on this host in PCI bus order; info is the i-th of them. */
RBLN_API rbln_status rbln_npu_count(size_t *count);
RBLN_API rbln_status rbln_npu_get(size_t i, rbln_npu_info *info);

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
} rbln_client_info;

/* Fills up to @capacity entries (each struct_size set by the caller); *count: how many exist. */
RBLN_API rbln_status rbln_device_clients(const rbln_device *device, rbln_client_info *clients,
					 size_t capacity, size_t *count);
/* Revokes a stale client (force: any, root only); *freed_bytes may be NULL. */
RBLN_API rbln_status rbln_device_reclaim(rbln_device *device, uint64_t client_id, int force,
					 uint64_t *freed_bytes);

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
} rbln_event_type;

/* Absent attributes are -1 (chiplet, engine, pid) or 0 (client, bytes). */
typedef struct rbln_event {
	size_t struct_size;		/* in: sizeof(rbln_event) */
	rbln_event_type type;
	uint32_t device;
	int32_t chiplet, engine, pid;
	uint64_t client, bytes;
} rbln_event;

RBLN_API rbln_status rbln_event_listener_open(rbln_event_listener **out);
RBLN_API void rbln_event_listener_close(rbln_event_listener *listener);
RBLN_API int rbln_event_listener_fd(const rbln_event_listener *listener);
/* Waits up to timeout_ms; RBLN_ERR_TIMEOUT if nothing came. */
RBLN_API rbln_status rbln_event_next(rbln_event_listener *listener, int timeout_ms,
				     rbln_event *event);

#ifdef __cplusplus
}
#endif

#endif /* RBLN_DEVMGR_V0_H */
