/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Kernel feature probes.  Decisions are made from the kernel's configuration,
 * from the headers it ships (__has_include) and from compile tests run by
 * Kbuild (one file per probe in probes/, each defining RBLN_PROBE_<NAME> when it compiles), never
 * from LINUX_VERSION_CODE: distribution kernels backport features.
 */
#ifndef RBLN_COMPAT_H
#define RBLN_COMPAT_H

#include <linux/kconfig.h>

/* Compute-accel nodes (/dev/accel/accelN): CONFIG_DRM_ACCEL and its API (probes/drm_accel.c). */
#if IS_ENABLED(CONFIG_DRM_ACCEL) && defined(RBLN_PROBE_DRM_ACCEL)
#include <drm/drm_accel.h>
#define RBLN_HAVE_DRM_ACCEL	1
#else
#define RBLN_HAVE_DRM_ACCEL	0
#endif

/* The DRM core prints per-file usage in fdinfo (probes/drm_fdinfo.c). */
#ifdef RBLN_PROBE_DRM_FDINFO
#define RBLN_HAVE_DRM_FDINFO	1
#else
#define RBLN_HAVE_DRM_FDINFO	0
#endif

/* Bus attribute callbacks take a const struct bus_type (probes/const_bus_attr.c). */
#ifdef RBLN_PROBE_CONST_BUS_ATTR
#define rbln_bus_type_arg	const struct bus_type
#else
#define rbln_bus_type_arg	struct bus_type
#endif

/* VMA flags are set through vm_flags_set() (probes/vm_flags_set.c). */
#ifdef RBLN_PROBE_VM_FLAGS_SET
#define rbln_vm_flags_set(vma, flags)	vm_flags_set(vma, flags)
#else
#define rbln_vm_flags_set(vma, flags)	((vma)->vm_flags |= (flags))
#endif

/* Older kernels need the PRIME hooks spelled out (probes/drm_driver_prime_hooks.c). */
#ifdef RBLN_PROBE_DRM_DRIVER_PRIME_HOOKS
#define RBLN_DRM_DRIVER_PRIME_HOOKS					\
	.prime_handle_to_fd = drm_gem_prime_handle_to_fd,		\
	.prime_fd_to_handle = drm_gem_prime_fd_to_handle,
#else
#define RBLN_DRM_DRIVER_PRIME_HOOKS
#endif

/* mmap of an exported dma-buf needs the driver hook (probes/drm_driver_gem_prime_mmap.c). */
#ifdef RBLN_PROBE_DRM_DRIVER_GEM_PRIME_MMAP
#define RBLN_DRM_DRIVER_GEM_PRIME_MMAP	.gem_prime_mmap = drm_gem_prime_mmap,
#else
#define RBLN_DRM_DRIVER_GEM_PRIME_MMAP
#endif

/*
 * Importers map a dma-buf without holding its reservation lock through
 * dma_buf_vmap_unlocked(); before that API, dma_buf_vmap() took the lock itself
 * (probes/dma_buf_vmap_unlocked.c).
 */
#ifdef RBLN_PROBE_DMA_BUF_VMAP_UNLOCKED
#define rbln_dma_buf_vmap(buf, map)	dma_buf_vmap_unlocked(buf, map)
#define rbln_dma_buf_vunmap(buf, map)	dma_buf_vunmap_unlocked(buf, map)
#else
#define rbln_dma_buf_vmap(buf, map)	dma_buf_vmap(buf, map)
#define rbln_dma_buf_vunmap(buf, map)	dma_buf_vunmap(buf, map)
#endif

/* Importing a symbol namespace: identifier or string (probes/module_import_ns_ident.c). */
#ifdef RBLN_PROBE_MODULE_IMPORT_NS_IDENT
#define RBLN_IMPORT_NS_DMA_BUF		MODULE_IMPORT_NS(DMA_BUF)
#else
#define RBLN_IMPORT_NS_DMA_BUF		MODULE_IMPORT_NS("DMA_BUF")
#endif

/* Multicast groups that only privileged sockets may join (probes/genl_mcast_cap.c). */
#ifdef RBLN_PROBE_GENL_MCAST_CAP
#define RBLN_GENL_MCAST_ADMIN_ONLY	GENL_MCAST_CAP_SYS_ADMIN
#else
#define RBLN_GENL_MCAST_ADMIN_ONLY	0
#endif

/* struct drm_driver has a date, which newer kernels dropped (probes/drm_driver_date.c). */
#ifdef RBLN_PROBE_DRM_DRIVER_DATE
#define RBLN_DRM_DRIVER_DATE(yyyymmdd)	.date = (yyyymmdd),
#else
#define RBLN_DRM_DRIVER_DATE(yyyymmdd)
#endif

/* drm_sched_job_init() takes credits and the DRM client id (probes/drm_sched_job_init_client_id.c). */
#ifdef RBLN_PROBE_DRM_SCHED_JOB_INIT_CLIENT_ID
#define rbln_sched_job_init(job, entity, owner, client_id) \
	drm_sched_job_init(job, entity, 1, owner, client_id)
#else
#define rbln_sched_job_init(job, entity, owner, client_id) \
	drm_sched_job_init(job, entity, owner)
#endif

/* The scheduler's run queues are sized by its user (probes/drm_sched_init_num_rqs.c). */
#ifdef RBLN_PROBE_DRM_SCHED_INIT_NUM_RQS
#define RBLN_SCHED_INIT_NUM_RQS		.num_rqs = DRM_SCHED_PRIORITY_COUNT,
#else
#define RBLN_SCHED_INIT_NUM_RQS
#endif

/* Restarting a stopped scheduler: (sched, errno), (sched, full_recovery) or (sched). */
#if defined(RBLN_PROBE_DRM_SCHED_START_ERRNO)
#define rbln_sched_start(sched)		drm_sched_start(sched, 0)
#elif defined(RBLN_PROBE_DRM_SCHED_START_RECOVERY)
#define rbln_sched_start(sched)		drm_sched_start(sched, true)
#else
#define rbln_sched_start(sched)		drm_sched_start(sched)
#endif

/* What a timeout handler returns after a reset (probes/drm_sched_stat_reset.c). */
#ifdef RBLN_PROBE_DRM_SCHED_STAT_RESET
#define RBLN_SCHED_STAT_RESET		DRM_GPU_SCHED_STAT_RESET
#else
#define RBLN_SCHED_STAT_RESET		DRM_GPU_SCHED_STAT_NOMINAL
#endif

/* Timeline syncobjs (probes/syncobj_timeline.c). */
#ifdef RBLN_PROBE_SYNCOBJ_TIMELINE
#define RBLN_DRIVER_SYNCOBJ_TIMELINE	DRIVER_SYNCOBJ_TIMELINE
#else
#define RBLN_DRIVER_SYNCOBJ_TIMELINE	0
#endif

/*
 * A wedged device tells user space how to recover (the WEDGED uevent,
 * probes/drm_dev_wedged_event*.c); older kernels have only our own event.
 */
#if defined(RBLN_PROBE_DRM_DEV_WEDGED_EVENT_TASK)
#define rbln_drm_dev_wedged_event(drm)	((void)drm_dev_wedged_event(drm, DRM_WEDGE_RECOVERY_REBIND, NULL))
#elif defined(RBLN_PROBE_DRM_DEV_WEDGED_EVENT)
#define rbln_drm_dev_wedged_event(drm)	((void)drm_dev_wedged_event(drm, DRM_WEDGE_RECOVERY_REBIND))
#else
#define rbln_drm_dev_wedged_event(drm)	do { } while (0)
#endif

#endif /* RBLN_COMPAT_H */
