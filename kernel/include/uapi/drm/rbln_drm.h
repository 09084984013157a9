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
#define DRM_RBLN_UAPI_VERSION		1
#define DRM_RBLN_UAPI_COMPAT_VERSION	1

#define DRM_RBLN_PCI_VENDOR_ID		0x1eff

#define DRM_RBLN_GET_PARAM		0x00
#define DRM_RBLN_DEVICE_INFO		0x01

#define DRM_IOCTL_RBLN_GET_PARAM \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_RBLN_GET_PARAM, struct drm_rbln_get_param)
#define DRM_IOCTL_RBLN_DEVICE_INFO \
	DRM_IOWR(DRM_COMMAND_BASE + DRM_RBLN_DEVICE_INFO, struct drm_rbln_device_info)

/* Products.  Numbers are stable; 0 never names a product. */
enum drm_rbln_sku {
	DRM_RBLN_SKU_UNKNOWN	= 0,
	DRM_RBLN_SKU_ATOM	= 1,	/* ATOM+  RBLN-CA12, 1 die */
	DRM_RBLN_SKU_ATOM_MAX	= 2,	/* ATOM-Max RBLN-CA25, 1 die */
	DRM_RBLN_SKU_REBEL100	= 3,	/* Rebel100 RBLN-CR03, 4 chiplets */
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
	__u16 pci_vendor_id;
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
};

#if defined(__cplusplus)
}
#endif

#endif /* _UAPI_RBLN_DRM_H_ */
