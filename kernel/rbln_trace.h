/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Tracepoints of DMA jobs, in the "rbln" event system: enough for a profiler
 * to rebuild one track per device, chiplet and engine (seed 004's trace
 * layout) and to follow a job from submit to completion by (client, seqno).
 * rbln_job_wait and rbln_job_signal tell which syncobj (and point) a job
 * waited for and which it signalled, so that `rbln-smi trace record` draws
 * an arrow for every dependency.  Not UAPI, but kept stable: fields are only
 * ever added, and tools read them by name.
 */
#undef TRACE_SYSTEM
#define TRACE_SYSTEM rbln

#if !defined(RBLN_TRACE_H) || defined(TRACE_HEADER_MULTI_READ)
#define RBLN_TRACE_H

#include <linux/tracepoint.h>
#include <drm/rbln_drm.h>

DECLARE_EVENT_CLASS(rbln_job,
	TP_PROTO(u32 device, u32 chiplet, u32 engine, u64 client, u64 seqno,
		 u64 bytes, const char *label, int status, pid_t pid, const char *comm),
	TP_ARGS(device, chiplet, engine, client, seqno, bytes, label, status, pid, comm),
	TP_STRUCT__entry(
		__field(u32, device)
		__field(u32, chiplet)
		__field(u32, engine)
		__field(int, status)
		__field(u64, client)
		__field(u64, seqno)
		__field(u64, bytes)
		/* A fixed array: the string helpers changed signature in 6.10. */
		__array(char, label, DRM_RBLN_LABEL_MAX)
		/* The process that opened the file (its owner in rbln-smi). */
		__field(pid_t, pid)
		__array(char, comm, TASK_COMM_LEN)
	),
	TP_fast_assign(
		__entry->device = device;
		__entry->chiplet = chiplet;
		__entry->engine = engine;
		__entry->status = status;
		__entry->client = client;
		__entry->seqno = seqno;
		__entry->bytes = bytes;
		strscpy(__entry->label, label, DRM_RBLN_LABEL_MAX);
		__entry->pid = pid;
		strscpy(__entry->comm, comm, TASK_COMM_LEN);
	),
	TP_printk("dev=%u chiplet=%u engine=%s client=%llu seqno=%llu bytes=%llu status=%d label=%s pid=%d comm=%s",
		  __entry->device, __entry->chiplet,
		  __print_symbolic(__entry->engine,
				   { DRM_RBLN_ENGINE_NEURAL_DMA, "neural_dma" },
				   { DRM_RBLN_ENGINE_TASK_DMA, "task_dma" },
				   { DRM_RBLN_ENGINE_DEVICE_HDMA, "device_hdma" },
				   { DRM_RBLN_ENGINE_EXTERNAL_HDMA, "external_hdma" }),
		  __entry->client, __entry->seqno, __entry->bytes, __entry->status,
		  __entry->label, __entry->pid, __entry->comm)
);

#define RBLN_JOB_EVENT(name)						\
DEFINE_EVENT(rbln_job, name,						\
	TP_PROTO(u32 device, u32 chiplet, u32 engine, u64 client, u64 seqno,	\
		 u64 bytes, const char *label, int status, pid_t pid,	\
		 const char *comm),					\
	TP_ARGS(device, chiplet, engine, client, seqno, bytes, label, status, pid, comm))

RBLN_JOB_EVENT(rbln_job_submit);
/*
 * The job begins on its engine.  A job the backend turned back from running inside SUBMIT
 * (engine_run_now's -EAGAIN: a slowed or hung engine, or one that yielded
 * its engine part way) has a second start when its scheduler runs it (the
 * rest of it); the last start before the completion counts.
 */
RBLN_JOB_EVENT(rbln_job_start);
RBLN_JOB_EVENT(rbln_job_complete);

/*
 * A submitted job and one syncobj: @sync names the syncobj (a hash of it, the
 * same for every file that shares it), @point its timeline point (0: binary).
 * rbln_job_wait: one per in_sync, read at submit (also those that had
 * signalled already); rbln_job_signal: the out_sync that gets its fence.
 */
DECLARE_EVENT_CLASS(rbln_job_sync,
	TP_PROTO(u32 device, u64 client, u64 seqno, u64 sync, u64 point),
	TP_ARGS(device, client, seqno, sync, point),
	TP_STRUCT__entry(
		__field(u32, device)
		__field(u64, client)
		__field(u64, seqno)
		__field(u64, sync)
		__field(u64, point)
	),
	TP_fast_assign(
		__entry->device = device;
		__entry->client = client;
		__entry->seqno = seqno;
		__entry->sync = sync;
		__entry->point = point;
	),
	TP_printk("dev=%u client=%llu seqno=%llu sync=%llx point=%llu",
		  __entry->device, __entry->client, __entry->seqno, __entry->sync, __entry->point)
);

DEFINE_EVENT(rbln_job_sync, rbln_job_wait,
	TP_PROTO(u32 device, u64 client, u64 seqno, u64 sync, u64 point),
	TP_ARGS(device, client, seqno, sync, point));
DEFINE_EVENT(rbln_job_sync, rbln_job_signal,
	TP_PROTO(u32 device, u64 client, u64 seqno, u64 sync, u64 point),
	TP_ARGS(device, client, seqno, sync, point));

#endif /* RBLN_TRACE_H */

#undef TRACE_INCLUDE_PATH
#define TRACE_INCLUDE_PATH .
#undef TRACE_INCLUDE_FILE
#define TRACE_INCLUDE_FILE rbln_trace
#include <trace/define_trace.h>
