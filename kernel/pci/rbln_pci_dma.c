// SPDX-License-Identifier: GPL-2.0-only
/*
 * The transfer engine.  edu has one DMA engine that moves up to 4095 bytes
 * between RAM and its 4 KiB buffer per transfer, ends each by a timer about
 * 100 ms later and raises an interrupt.  Every engine this NPU offers copies
 * through it: each chunk of a copy goes source DMA addresses -> edu buffer
 * -> destination DMA addresses, two transfers, each completed by its
 * interrupt.  The CPU never touches the bytes.
 *
 * push runs in atomic context, so it only queues the job; a work item runs
 * the jobs one transfer at a time for the whole device (the engines of one
 * edu serialize).  Everything the work item reads of a job (its copies and
 * their sg tables) it reads under @lock after checking the job is still its
 * own, so a reset that takes the job back under that lock is final.
 *
 * A transfer in flight cannot be cancelled on edu.  When its job is reset
 * (or its interrupt never came), bus mastering is switched off at once: the
 * transfer, when edu's timer fires, reaches no memory (and raises no MSI),
 * so the core may unmap the job's buffers as soon as reset returns.  The
 * next transfer first waits for edu to be idle and then turns bus mastering
 * back on.  An engine that is still not idle by then never will be: the
 * device is wedged (rbln_hw_device_wedged) until a RESET finds it idle.
 */
#include <linux/dma-fence.h>
#include <linux/interrupt.h>
#include <linux/io.h>
#include <linux/io-64-nonatomic-lo-hi.h>
#include <linux/jiffies.h>
#include <linux/minmax.h>
#include <linux/scatterlist.h>
#include <linux/workqueue.h>

#include "rbln_pci.h"

/*
 * The transfer work of every edu.  It signals fences, so it runs in a queue
 * of its own that memory reclaim cannot starve (WQ_MEM_RECLAIM: a reclaim
 * may wait for those fences), not in system_unbound_wq, which 7.x also
 * deprecates (a warning at its first use).
 */
static struct workqueue_struct *rbln_pci_wq;

int rbln_pci_dma_wq_init(void)
{
	rbln_pci_wq = alloc_workqueue("rbln-pci", WQ_UNBOUND | WQ_MEM_RECLAIM, 0);
	return rbln_pci_wq ? 0 : -ENOMEM;
}

void rbln_pci_dma_wq_fini(void)
{
	destroy_workqueue(rbln_pci_wq);
}

static struct rbln_pci_device *rbln_pci_of(struct rbln_device *rdev)
{
	return rbln_device_hw_priv(rdev);
}

/* Where the work item is in a job: a copy, its chunk, and which leg of it. */
struct rbln_pci_cursor {
	u32 copy;
	u64 done;			/* bytes of this copy moved */
	struct scatterlist *src, *dst;	/* the DMA segments the next chunk starts in */
	u64 src_off, dst_off;		/* ... and where in them */
	u32 len;			/* the chunk in the device buffer */
	bool to_ram;			/* next: its device-to-RAM leg */
	bool started;
};

struct rbln_pci_xfer {
	u64 src, dst;
	u32 len;
	u32 cmd;
	bool faulty;			/* fault injection: reads an unmapped IOVA */
};

static int rbln_pci_copy_start(const struct rbln_hw_job *job, struct rbln_pci_cursor *c, u32 i)
{
	const struct rbln_hw_buffer *src = &job->bufs[2 * i], *dst = &job->bufs[2 * i + 1];

	/* dma_dev is set: the core hands every buffer as DMA addresses. */
	if (WARN_ON_ONCE(!src->sgt || !dst->sgt))
		return -EIO;
	c->copy = i;
	c->done = 0;
	c->src = src->sgt->sgl;
	c->dst = dst->sgt->sgl;
	c->src_off = 0;
	c->dst_off = 0;
	return 0;
}

static void rbln_pci_advance(struct scatterlist **sg, u64 *off, u32 len)
{
	*off += len;
	if (*off == sg_dma_len(*sg)) {
		*sg = sg_next(*sg);
		*off = 0;
	}
}

/*
 * The job's next transfer into @x: 1, or 0 once the job is done, or an
 * error.  Called under @lock with the job still running (it reads the job).
 * A chunk never crosses a DMA segment of either side, so each leg is one
 * contiguous range of bus addresses.
 */
static int rbln_pci_next_xfer(const struct rbln_hw_job *job, struct rbln_pci_cursor *c,
			      struct rbln_pci_xfer *x)
{
	const struct drm_rbln_copy *copy;
	int ret;

	if (c->to_ram) {
		x->src = EDU_BUF_ADDR;
		x->dst = sg_dma_address(c->dst) + c->dst_off;
		x->len = c->len;
		x->cmd = EDU_DMA_TO_RAM;
		rbln_pci_advance(&c->src, &c->src_off, c->len);
		rbln_pci_advance(&c->dst, &c->dst_off, c->len);
		c->done += c->len;
		c->to_ram = false;
		return 1;
	}
	if (!c->started) {
		c->started = true;
		if (!job->count)
			return 0;
		ret = rbln_pci_copy_start(job, c, 0);
		if (ret)
			return ret;
	}
	while (c->done == job->copies[c->copy].size) {
		if (c->copy + 1 == job->count)
			return 0;
		ret = rbln_pci_copy_start(job, c, c->copy + 1);
		if (ret)
			return ret;
	}
	copy = &job->copies[c->copy];
	if (WARN_ON_ONCE(!c->src || !c->dst))
		return -EIO;	/* the sg tables are shorter than the copy */
	c->len = min3(copy->size - c->done, (u64)EDU_XFER_MAX,
		      min(sg_dma_len(c->src) - c->src_off, sg_dma_len(c->dst) - c->dst_off));
	if (WARN_ON_ONCE(!c->len))
		return -EIO;
	x->src = sg_dma_address(c->src) + c->src_off;
	x->dst = EDU_BUF_ADDR;
	x->len = c->len;
	x->cmd = 0;
	c->to_ram = true;
	return 1;
}

/* Under @lock: program one transfer (the registers are ignored while one runs). */
static void rbln_pci_start(struct rbln_pci_device *edev, struct rbln_pci_xfer *x)
{
	lockdep_assert_held(&edev->lock);
	/* An IOVA the IOMMU never maps (its allocator starts above page 0). */
	if (!x->cmd && atomic_add_unless(&edev->fault_next, -1, 0)) {
		x->src = 0;
		x->faulty = true;
	}
	WRITE_ONCE(edev->irq_seen, false);
	edev->in_flight = true;
	/* Fault injection: the engine takes the transfer and never ends it. */
	if (READ_ONCE(edev->stuck))
		return;
	lo_hi_writeq(x->src, edev->mmio + EDU_REG_DMA_SRC);
	lo_hi_writeq(x->dst, edev->mmio + EDU_REG_DMA_DST);
	lo_hi_writeq(x->len, edev->mmio + EDU_REG_DMA_COUNT);
	lo_hi_writeq(x->cmd | EDU_DMA_START | EDU_DMA_IRQ, edev->mmio + EDU_REG_DMA_CMD);
}

/* Under @lock: nobody waits for the transfer in flight any more. */
static void rbln_pci_abandon(struct rbln_pci_device *edev)
{
	lockdep_assert_held(&edev->lock);
	if (!edev->in_flight)
		return;
	edev->in_flight = false;
	/* When edu's timer fires, its DMA (and MSI) reach nothing. */
	pci_clear_master(edev->pdev);
	edev->dirty = true;
}

/*
 * Until edu's DMA engine is idle: a transfer it runs ends by its timer (100
 * ms after it began) whether anyone waits or not, and edu ignores the DMA
 * registers meanwhile.  -ENODEV once the device is gone or being removed,
 * -EIO if it is still busy after RBLN_PCI_XFER_TIMEOUT_MS.
 */
static int rbln_pci_wait_idle(struct rbln_pci_device *edev)
{
	unsigned long deadline = jiffies + msecs_to_jiffies(RBLN_PCI_XFER_TIMEOUT_MS);
	u32 cmd;

	for (;;) {
		if (READ_ONCE(edev->dead))
			return -ENODEV;
		cmd = readl(edev->mmio + EDU_REG_DMA_CMD);
		if (cmd == ~0U)
			return -ENODEV;		/* the device is gone */
		if (!(cmd & EDU_DMA_START) && !READ_ONCE(edev->stuck))
			return 0;
		if (time_after(jiffies, deadline)) {
			dev_err_ratelimited(&edev->pdev->dev,
					    "DMA engine still busy %u ms after an abandoned transfer\n",
					    RBLN_PCI_XFER_TIMEOUT_MS);
			return -EIO;
		}
		wait_event_timeout(edev->wait, READ_ONCE(edev->dead), msecs_to_jiffies(5));
	}
}

/*
 * After an abandoned transfer: wait until edu is idle (its timer fired),
 * drop the interrupt it raised, and turn bus mastering back on.
 */
static int rbln_pci_settle(struct rbln_pci_device *edev)
{
	int ret = rbln_pci_wait_idle(edev);

	/*
	 * Still busy a transfer's timeout after it was abandoned: the engine
	 * does not come back by itself, and every job would fail a second
	 * later the same way.  Wedged instead (status FAULT and its event),
	 * until a RESET finds the engine idle again.
	 */
	if (ret == -EIO)
		rbln_hw_device_wedged(edev->rdev, ret);
	if (ret)
		return ret;
	writel(EDU_IRQ_DMA, edev->mmio + EDU_REG_IRQ_ACK);
	/* An INTx handler of the old transfer is done before the flag is cleared. */
	synchronize_irq(edev->irq);
	WRITE_ONCE(edev->irq_seen, false);
	pci_set_master(edev->pdev);
	spin_lock(&edev->lock);
	edev->dirty = false;
	spin_unlock(&edev->lock);
	return 0;
}

/*
 * Probe, before bus mastering is turned on: the previous binding (sysfs
 * remove and rescan, unbind and bind, .shutdown then kexec) may have left a
 * transfer running with its addresses, IOVAs it has since unmapped or pages
 * it has freed.  With bus mastering off it reaches nothing; turned on
 * before it ended, it would write them, and edu would ignore this binding's
 * first transfer and raise the old one's interrupt for it.
 */
int rbln_pci_dma_wait_stale(struct rbln_pci_device *edev)
{
	int ret;

	pci_clear_master(edev->pdev);
	ret = rbln_pci_wait_idle(edev);
	if (ret)
		return ret;
	writel(EDU_IRQ_DMA, edev->mmio + EDU_REG_IRQ_ACK);
	return 0;
}

/* Waits for the interrupt of the transfer just started for @job. */
static int rbln_pci_wait(struct rbln_pci_device *edev, struct rbln_hw_job *job,
			 const struct rbln_pci_xfer *x)
{
	bool done, cancelled, dead;

	wait_event_timeout(edev->wait,
			   READ_ONCE(edev->irq_seen) || READ_ONCE(edev->running) != job ||
			   READ_ONCE(edev->dead),
			   msecs_to_jiffies(RBLN_PCI_XFER_TIMEOUT_MS));
	spin_lock(&edev->lock);
	done = READ_ONCE(edev->irq_seen);
	if (done)
		edev->in_flight = false;
	else
		rbln_pci_abandon(edev);
	cancelled = edev->running != job;
	dead = edev->dead;
	spin_unlock(&edev->lock);

	if (done)
		edev->transfers++;
	if (cancelled)
		return -ECANCELED;	/* taken back by a reset: nobody hears it */
	if (done)
		return 0;
	if (dead)
		return -ENODEV;
	edev->transfer_timeouts++;
	dev_err_ratelimited(&edev->pdev->dev,
			    "transfer of %u bytes %#llx -> %#llx: no interrupt within %u ms; the job fails\n",
			    x->len, x->src, x->dst, RBLN_PCI_XFER_TIMEOUT_MS);
	return -EIO;
}

static int rbln_pci_run(struct rbln_pci_device *edev, struct rbln_hw_job *job)
{
	struct rbln_pci_cursor cursor = {};
	struct rbln_pci_xfer x;
	int ret;

	for (;;) {
		if (READ_ONCE(edev->dirty)) {
			ret = rbln_pci_settle(edev);
			if (ret)
				return ret;
		}
		memset(&x, 0, sizeof(x));
		spin_lock(&edev->lock);
		if (edev->running != job)
			ret = -ECANCELED;
		else if (edev->dead)
			ret = -ENODEV;
		else
			ret = rbln_pci_next_xfer(job, &cursor, &x);
		if (ret > 0)
			rbln_pci_start(edev, &x);
		spin_unlock(&edev->lock);
		if (ret <= 0)
			return ret;
		ret = rbln_pci_wait(edev, job, &x);
		if (ret)
			return ret;
		if (x.faulty) {
			dev_info(&edev->pdev->dev,
				 "fault_next_transfer: a transfer read IOVA 0 (never mapped): its job fails\n");
			return -EIO;
		}
	}
}

/* The next pushed job, round robin over the engines. */
static struct rbln_hw_job *rbln_pci_take(struct rbln_pci_device *edev)
{
	unsigned int i, kind;

	lockdep_assert_held(&edev->lock);
	for (i = 0; i < DRM_RBLN_ENGINE_COUNT; i++) {
		kind = (edev->next_kind + i) % DRM_RBLN_ENGINE_COUNT;
		if (edev->pending[kind]) {
			struct rbln_hw_job *job = edev->pending[kind];

			edev->pending[kind] = NULL;
			edev->next_kind = kind + 1;
			return job;
		}
	}
	return NULL;
}

/* Under @lock: @job's end is reported next, and a reset of its engine waits for that. */
static void rbln_pci_begin_report(struct rbln_pci_device *edev, struct rbln_hw_job *job)
{
	lockdep_assert_held(&edev->lock);
	edev->reporting = job;
	edev->reporting_engine = job->engine;
}

static void rbln_pci_report(struct rbln_pci_device *edev, struct rbln_hw_job *job, int status)
{
	rbln_hw_job_done(job, status);
	spin_lock(&edev->lock);
	edev->reporting = NULL;
	spin_unlock(&edev->lock);
	wake_up_all(&edev->wait);
}

static bool rbln_pci_reporting(struct rbln_pci_device *edev, enum drm_rbln_engine kind)
{
	bool ret;

	spin_lock(&edev->lock);
	ret = edev->reporting && edev->reporting_engine == kind;
	spin_unlock(&edev->lock);
	return ret;
}

/*
 * The pushed jobs' fences signal only once this has moved their bytes: the
 * whole of it is a fence-signalling section, which lockdep checks where it
 * is built in (CONFIG_PROVE_LOCKING; the sanitizer kernel has no IOMMU to
 * bind edu behind, so no VM of make test checks it yet).  So nothing here
 * allocates or takes a lock that is held while allocating or waiting for a
 * fence: only @lock (a spinlock), config-space writes (pci_lock, a raw
 * spinlock), MMIO, waits for edu's interrupt thread, and the completion
 * hook, which is such a section itself.
 */
static void rbln_pci_work(struct work_struct *work)
{
	struct rbln_pci_device *edev = container_of(work, struct rbln_pci_device, work);
	bool cookie = dma_fence_begin_signalling();
	struct rbln_hw_job *job;
	bool report;
	int status;

	for (;;) {
		spin_lock(&edev->lock);
		job = edev->dead ? NULL : rbln_pci_take(edev);
		edev->running = job;
		spin_unlock(&edev->lock);
		if (!job)
			break;
		status = rbln_pci_run(edev, job);
		spin_lock(&edev->lock);
		report = edev->running == job;	/* not taken back by a reset meanwhile */
		edev->running = NULL;
		if (report)
			rbln_pci_begin_report(edev, job);
		spin_unlock(&edev->lock);
		if (report)
			rbln_pci_report(edev, job, status);
	}
	dma_fence_end_signalling(cookie);
}

/*
 * The most transfers @job takes.  A copy's chunks end at every DMA segment
 * boundary of either side and otherwise every EDU_XFER_MAX bytes: at most
 * (src segments + dst segments - 1) pieces, each in chunks of EDU_XFER_MAX
 * bytes and one shorter; two transfers per chunk.
 */
static u64 rbln_pci_job_xfers(const struct rbln_hw_job *job)
{
	u64 chunks = 0;
	u32 i;

	for (i = 0; i < job->count; i++) {
		const struct sg_table *src = job->bufs[2 * i].sgt, *dst = job->bufs[2 * i + 1].sgt;

		if (!src || !dst)
			return U64_MAX;
		chunks += (u64)src->nents + dst->nents - 1 + div_u64(job->copies[i].size, EDU_XFER_MAX);
	}
	return 2 * chunks;
}

/*
 * The job timeout (RBLN_PCI_JOB_MIN_TIMEOUT_MS) holds both engines' jobs of
 * RBLN_PCI_JOB_MAX_XFERS transfers each, one waiting behind the other: a job
 * of more (job_max_bytes bounds bytes, not copies: 4096 copies of a byte
 * would take edu 13 minutes) would time out, and make the other engine's
 * job, waiting behind it, time out too.  Refused at SUBMIT instead.
 */
int rbln_pci_engine_check(struct rbln_device *rdev, const struct rbln_hw_job *job)
{
	u64 xfers = rbln_pci_job_xfers(job);

	if (xfers <= RBLN_PCI_JOB_MAX_XFERS)
		return 0;
	dev_info_ratelimited(&rbln_pci_of(rdev)->pdev->dev,
			     "SUBMIT refused: a job of %u copies (%llu bytes) takes up to %llu transfers, edu runs at most %u per job (fewer copies, or copies within fewer pages)\n",
			     job->count, job->bytes, xfers, RBLN_PCI_JOB_MAX_XFERS);
	return -EINVAL;
}

int rbln_pci_engine_push(struct rbln_device *rdev, struct rbln_hw_job *job)
{
	struct rbln_pci_device *edev = rbln_pci_of(rdev);
	int ret = 0;

	spin_lock(&edev->lock);
	if (edev->dead)
		ret = -ENODEV;
	else if (WARN_ON_ONCE(edev->pending[job->engine] ||
			      (edev->running && edev->running->engine == job->engine)))
		ret = -EBUSY;	/* the core pushed a second job to one engine */
	else
		edev->pending[job->engine] = job;
	spin_unlock(&edev->lock);
	if (!ret)
		queue_work(rbln_pci_wq, &edev->work);
	return ret;
}

/*
 * Takes the engine's job back at once, whether it waits for its turn or is
 * moving (then its transfer in flight is abandoned, see the top): a
 * spinlock and one config-space write.  A job whose end the work is
 * reporting just then is not ours to take any more, and the caller frees
 * it once this returns: the reset waits for that report (a fence signal
 * and a queue_work(), microseconds), or the work would report a freed job.
 */
int rbln_pci_engine_reset(struct rbln_device *rdev, u32 chiplet, enum drm_rbln_engine kind)
{
	struct rbln_pci_device *edev = rbln_pci_of(rdev);

	spin_lock(&edev->lock);
	edev->pending[kind] = NULL;
	if (edev->running && edev->running->engine == kind) {
		edev->running = NULL;
		rbln_pci_abandon(edev);
	}
	spin_unlock(&edev->lock);
	wake_up_all(&edev->wait);
	wait_event(edev->wait, !rbln_pci_reporting(edev, kind));
	return 0;
}

/*
 * edu is conventional PCI without FLR, an Advanced Features capability or
 * power management, so it has no function reset of its own (and a
 * secondary bus reset would reset the root port's other devices too).
 * RESET checks that the device answers as edu and that its DMA engine is
 * idle (an abandoned transfer ended), and leaves it to settle before the
 * next transfer, as after a reset engine.  An engine still busy fails the
 * RESET: the device stays wedged.
 */
int rbln_pci_device_reset(struct rbln_device *rdev)
{
	struct rbln_pci_device *edev = rbln_pci_of(rdev);
	u32 id = readl(edev->mmio + EDU_REG_ID);

	dev_info_once(&edev->pdev->dev,
		      "edu has no function reset (no FLR, AF or PM capability): RESET re-checks the device\n");
	if (id == ~0U || (id & 0xff) != EDU_ID_MAGIC) {
		dev_err(&edev->pdev->dev, "RESET: the device does not answer (ID register %#x)\n", id);
		return -EIO;
	}
	if (READ_ONCE(edev->dirty) && rbln_pci_wait_idle(edev)) {
		dev_err(&edev->pdev->dev,
			"RESET: the DMA engine is still busy with an abandoned transfer\n");
		return -EIO;
	}
	spin_lock(&edev->lock);
	if (!edev->running && !edev->in_flight && !(readl(edev->mmio + EDU_REG_DMA_CMD) & EDU_DMA_START))
		writel(EDU_IRQ_DMA, edev->mmio + EDU_REG_IRQ_ACK);	/* a stale interrupt */
	spin_unlock(&edev->lock);
	atomic_set(&edev->fault_next, 0);
	return 0;
}

void rbln_pci_sync_irq(struct rbln_device *rdev)
{
	struct rbln_pci_device *edev = rbln_pci_of(rdev);

	rbln_pci_dma_quiesce(edev);
	synchronize_irq(edev->irq);
}

void rbln_pci_dma_quiesce(struct rbln_pci_device *edev)
{
	spin_lock(&edev->lock);
	edev->dead = true;
	rbln_pci_abandon(edev);
	spin_unlock(&edev->lock);
	wake_up_all(&edev->wait);
	flush_work(&edev->work);
	pci_clear_master(edev->pdev);
	/*
	 * .shutdown: jobs pushed and not started end now, or their fences
	 * would never signal (removal took them back through engine_reset).
	 */
	for (;;) {
		struct rbln_hw_job *job;

		spin_lock(&edev->lock);
		job = rbln_pci_take(edev);
		if (job)
			rbln_pci_begin_report(edev, job);
		spin_unlock(&edev->lock);
		if (!job)
			break;
		rbln_pci_report(edev, job, -ENODEV);
	}
}

/* Hard handler: read and acknowledge (edu wants the ack with MSI too). */
irqreturn_t rbln_pci_irq(int irq, void *data)
{
	struct rbln_pci_device *edev = data;
	u32 status = readl(edev->mmio + EDU_REG_IRQ_STATUS);

	if (!status || status == ~0U)
		return IRQ_NONE;	/* not ours (INTx is shared), or the device is gone */
	writel(status, edev->mmio + EDU_REG_IRQ_ACK);
	return status & EDU_IRQ_DMA ? IRQ_WAKE_THREAD : IRQ_HANDLED;
}

/* Thread: the transfer in flight is complete. */
irqreturn_t rbln_pci_irq_thread(int irq, void *data)
{
	struct rbln_pci_device *edev = data;

	WRITE_ONCE(edev->irq_seen, true);
	wake_up_all(&edev->wait);
	return IRQ_HANDLED;
}

void rbln_pci_dma_init(struct rbln_pci_device *edev)
{
	spin_lock_init(&edev->lock);
	init_waitqueue_head(&edev->wait);
	INIT_WORK(&edev->work, rbln_pci_work);
	atomic_set(&edev->fault_next, 0);
}
