/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The PCI backend, for QEMU's "edu" device (1234:11e8): a stand-in board
 * that exercises the real PCI, interrupt, IOMMU and DMA paths.  It is not
 * Rebellions silicon, and this driver never binds Rebellions' ids.
 */
#ifndef RBLN_PCI_H
#define RBLN_PCI_H

#include <linux/pci.h>
#include <linux/sizes.h>
#include <linux/spinlock.h>
#include <linux/wait.h>
#include <linux/workqueue.h>
#include <drm/rbln_drm.h>

#include "../rbln_hw.h"

/* BAR0 registers (qemu's docs/specs/edu.rst). */
#define EDU_REG_ID		0x00	/* 0xMMmm00ed: major, minor, 0xed */
#define EDU_REG_LIVENESS	0x04	/* reads back the inverse of what was written */
#define EDU_REG_IRQ_STATUS	0x24
#define EDU_REG_IRQ_RAISE	0x60
#define EDU_REG_IRQ_ACK		0x64
#define EDU_REG_DMA_SRC		0x80
#define EDU_REG_DMA_DST		0x88
#define EDU_REG_DMA_COUNT	0x90
#define EDU_REG_DMA_CMD		0x98

#define EDU_ID_MAGIC		0xed		/* low byte of EDU_REG_ID */
#define EDU_DMA_START		BIT(0)		/* set: run; cleared by the device when done */
#define EDU_DMA_TO_RAM		BIT(1)		/* from the device buffer to RAM (else RAM to it) */
#define EDU_DMA_IRQ		BIT(2)		/* raise EDU_IRQ_DMA when done */
#define EDU_IRQ_DMA		0x100

/* The device's own buffer, at this address in its DMA address space. */
#define EDU_BUF_ADDR		0x40000
/*
 * Most bytes of one transfer.  The buffer is 4096 bytes, but Debian's qemu
 * 7.2 checks a transfer's end with "end < buf + 4096" and aborts the whole
 * VM (hw_error) on a 4096-byte or a zero-length transfer (fixed upstream in
 * 9.1): every transfer stays within 1..4095 bytes at the buffer's start.
 */
#define EDU_XFER_MAX		4095
/* edu's DMA engine reaches 28 bits by default and silently clamps beyond. */
#define EDU_DMA_BITS		28
/* Each transfer ends by a timer 100 ms after it starts. */
#define EDU_XFER_MS		100

/*
 * A transfer whose interrupt has not come by then failed (an unplugged edu
 * deletes its timer: the transfer never ends).  Ten times the nominal time,
 * for a loaded host running qemu without KVM.
 */
#define RBLN_PCI_XFER_TIMEOUT_MS	1000
/*
 * A job copies at most this: 16 KiB takes 4 chunks of up to 4095 bytes, plus
 * one per DMA segment boundary of either side (up to 8 with 4 KiB pages not
 * merged by an IOMMU), two transfers each: about 2.4 s at worst.
 */
#define RBLN_PCI_JOB_MAX_BYTES		SZ_16K
#define RBLN_PCI_JOB_MAX_XFERS		(2 * (RBLN_PCI_JOB_MAX_BYTES / EDU_XFER_MAX + 1 + 8))
/* The device's memory: system RAM, mapped for the device by the core per job. */
#define RBLN_PCI_MEMORY			SZ_64M
/* Indices of PCI NPUs start above every simulated one (0..254): the two never collide. */
#define RBLN_PCI_FIRST_INDEX		256

/* Engines offered: each moves its bytes through edu's one DMA engine. */
#define RBLN_PCI_ENGINES	(BIT(DRM_RBLN_ENGINE_EXTERNAL_HDMA) | \
				 BIT(DRM_RBLN_ENGINE_NEURAL_DMA))
#define RBLN_PCI_NR_ENGINES	2

struct rbln_pci_device {
	struct pci_dev *pdev;
	void __iomem *mmio;
	struct rbln_device *rdev;
	u32 index;
	int irq;

	/*
	 * The transfer engine (rbln_pci_dma.c): jobs pushed per engine, run one
	 * transfer at a time for the whole device by @work.
	 */
	spinlock_t lock;		/* pending, running, reporting, dirty, in_flight */
	struct rbln_hw_job *pending[DRM_RBLN_ENGINE_COUNT];	/* pushed, not started */
	struct rbln_hw_job *running;	/* the job @work is moving, until reported */
	/*
	 * The job whose end is being reported (rbln_hw_job_done), only
	 * compared: a reset of its engine waits for the report, after which
	 * the core may free it.  Its engine is kept apart for that reason.
	 */
	struct rbln_hw_job *reporting;
	enum drm_rbln_engine reporting_engine;
	unsigned int next_kind;		/* round robin over the engines' pending jobs */
	/*
	 * A transfer may still be in flight that nobody waits for (its job was
	 * reset or timed out): bus mastering is off, so it reaches no memory;
	 * the next transfer first waits for the device to be idle.
	 */
	bool dirty;
	bool in_flight;			/* a transfer was started and its end not seen */
	bool dead;			/* sync_irq or shutdown: no transfer starts any more */
	struct work_struct work;
	wait_queue_head_t wait;		/* the transfer's interrupt, a reset, removal */
	bool irq_seen;			/* EDU_IRQ_DMA came for the transfer in flight */

	/* debugfs fault_next_transfer: the next RAM-to-device leg reads an unmapped IOVA. */
	atomic_t fault_next;
	/* debugfs stuck_engine: transfers started meanwhile never end (a hung DMA engine). */
	bool stuck;
	u64 transfers;			/* debugfs: transfers completed */
	u64 transfer_timeouts;		/* debugfs: transfers whose interrupt never came */
};

/* rbln_pci_dma.c: the transfer engine behind engine_push. */
/* The module's transfer queue, before the driver registers and after it unregistered. */
int rbln_pci_dma_wq_init(void);
void rbln_pci_dma_wq_fini(void);
void rbln_pci_dma_init(struct rbln_pci_device *edev);
/* Probe: a transfer of the previous binding has ended (bus mastering off meanwhile). */
int rbln_pci_dma_wait_stale(struct rbln_pci_device *edev);
int rbln_pci_engine_check(struct rbln_device *rdev, const struct rbln_hw_job *job);
int rbln_pci_engine_push(struct rbln_device *rdev, struct rbln_hw_job *job);
int rbln_pci_engine_reset(struct rbln_device *rdev, u32 chiplet, enum drm_rbln_engine kind);
int rbln_pci_device_reset(struct rbln_device *rdev);
void rbln_pci_sync_irq(struct rbln_device *rdev);
/* .shutdown: no DMA after this. */
void rbln_pci_dma_quiesce(struct rbln_pci_device *edev);
irqreturn_t rbln_pci_irq(int irq, void *data);
irqreturn_t rbln_pci_irq_thread(int irq, void *data);

/* rbln_pci_debugfs.c */
void rbln_pci_debugfs_init(struct rbln_pci_device *edev);

#endif /* RBLN_PCI_H */
