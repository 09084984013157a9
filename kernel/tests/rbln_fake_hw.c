// SPDX-License-Identifier: GPL-2.0-only
/*
 * The fake backend (rbln_fake_hw.h).  It includes rbln_hw.h and the product
 * table only, as a backend may; the core's internals stay out of reach.
 * Memory is host memory; an engine "runs" a job when the test says so, in
 * the test's own thread (process context, as the contract wants the
 * completion), copying with the CPU through the buffers the core handed it.
 */
#include <kunit/device.h>
#include <kunit/resource.h>
#include <linux/device.h>
#include <linux/mm.h>
#include <linux/sizes.h>
#include <linux/string.h>
#include <linux/vmalloc.h>

#include "../rbln_sku.h"
#include "rbln_fake_hw.h"

/* Device ids of their own: the module links no other backend. */
#define RBLN_FAKE_FIRST_INDEX	100
#define RBLN_FAKE_MEMORY	SZ_64M

static atomic_t rbln_fake_next_index = ATOMIC_INIT(0);

static struct rbln_fake_hw *to_fake(struct rbln_device *rdev)
{
	return rbln_device_hw_priv(rdev);
}

/* A call the contract rules out; the test fails on it when it ends. */
static void rbln_fake_hw_bad(struct rbln_fake_hw *fake, const char *what)
{
	if (atomic_inc_return(&fake->bad_calls) == 1)
		WRITE_ONCE(fake->bad_call, what);
}

/* Every op but mem_free comes before rbln_device_destroy() returns. */
static struct rbln_fake_hw *rbln_fake_hw_enter(struct rbln_device *rdev, const char *op)
{
	struct rbln_fake_hw *fake = to_fake(rdev);

	if (READ_ONCE(fake->destroyed))
		rbln_fake_hw_bad(fake, op);
	return fake;
}

static void rbln_fake_read_sensors(struct rbln_device *rdev, struct rbln_sensors *s)
{
	rbln_fake_hw_enter(rdev, "read_sensors after destroy");
	s->temperature_mc = 40000;
	s->power_uw = 1000000;
	s->pstate = 14;
}

static int rbln_fake_engine_push(struct rbln_device *rdev, struct rbln_hw_job *job)
{
	struct rbln_fake_hw *fake = rbln_fake_hw_enter(rdev, "engine_push after destroy");
	int error = READ_ONCE(fake->push_error);

	atomic_inc(&fake->pushes);
	if (job->chiplet >= fake->info.sku->chiplets ||
	    !(fake->info.engines[job->chiplet] & BIT(job->engine))) {
		rbln_fake_hw_bad(fake, "engine_push to an engine the backend did not declare");
		return -EINVAL;
	}
	if (error)
		return error;
	spin_lock(&fake->lock);
	if (fake->pushed[job->chiplet][job->engine])
		rbln_fake_hw_bad(fake, "engine_push to an engine whose job has not ended");
	fake->pushed[job->chiplet][job->engine] = job;
	spin_unlock(&fake->lock);
	wake_up_all(&fake->pushed_wait);
	return 0;
}

/* Takes an engine's job off it: it is no longer the engine's to report. */
static struct rbln_hw_job *rbln_fake_hw_take(struct rbln_fake_hw *fake, u32 chiplet,
					     enum drm_rbln_engine kind)
{
	struct rbln_hw_job *job;

	spin_lock(&fake->lock);
	job = fake->pushed[chiplet][kind];
	fake->pushed[chiplet][kind] = NULL;
	spin_unlock(&fake->lock);
	return job;
}

static int rbln_fake_engine_reset(struct rbln_device *rdev, u32 chiplet, enum drm_rbln_engine kind)
{
	struct rbln_fake_hw *fake = rbln_fake_hw_enter(rdev, "engine_reset after destroy");

	atomic_inc(&fake->engine_resets);
	rbln_fake_hw_take(fake, chiplet, kind);
	return READ_ONCE(fake->engine_reset_error);
}

static int rbln_fake_device_reset(struct rbln_device *rdev)
{
	struct rbln_fake_hw *fake = rbln_fake_hw_enter(rdev, "device_reset after destroy");

	atomic_inc(&fake->device_resets);
	return READ_ONCE(fake->device_reset_error);
}

static void rbln_fake_sync_irq(struct rbln_device *rdev)
{
	atomic_inc(&rbln_fake_hw_enter(rdev, "sync_irq after destroy")->sync_irqs);
}

/* Where the core's allocator may put @size bytes of @chiplet's memory. */
static bool rbln_fake_address_valid(const struct rbln_fake_hw *fake, u32 chiplet, u64 address,
				    size_t size)
{
	u64 chiplets = fake->info.sku->chiplets, base, span;

	if (chiplet == RBLN_HW_HOST_MEMORY)
		return address == 0;
	if (chiplet == DRM_RBLN_CHIPLET_INTERLEAVED) {
		base = RBLN_MAX_CHIPLETS * RBLN_CHIPLET_WINDOW;
		span = fake->info.memory_total;
	} else if (chiplet < chiplets) {
		base = chiplet * RBLN_CHIPLET_WINDOW;
		span = div_u64(fake->info.memory_total, chiplets);
	} else {
		return false;
	}
	return address >= base && address - base + size <= span;
}

static void *rbln_fake_mem_alloc(struct rbln_device *rdev, u32 chiplet, u64 address, size_t size)
{
	struct rbln_fake_hw *fake = rbln_fake_hw_enter(rdev, "mem_alloc after destroy");
	void *backing;

	if (!rbln_fake_address_valid(fake, chiplet, address, size)) {
		pr_err("rbln_fake_hw: mem_alloc of %zu bytes for chiplet %u at %#llx\n",
		       size, chiplet, address);
		rbln_fake_hw_bad(fake, "mem_alloc at an address outside the chiplet's window");
	}
	backing = __vmalloc(size, GFP_KERNEL_ACCOUNT | __GFP_ZERO | __GFP_NOWARN);
	if (backing)
		atomic_inc(&fake->allocs);
	return backing;
}

/* Allowed after destroy: the last file or importer may let a buffer go later. */
static void rbln_fake_mem_free(struct rbln_device *rdev, void *vaddr)
{
	struct rbln_fake_hw *fake = to_fake(rdev);

	vfree(vaddr);
	atomic_inc(&fake->frees);
	wake_up_all(&fake->pushed_wait);
}

static struct page *rbln_fake_mem_page(struct rbln_device *rdev, void *vaddr, size_t offset)
{
	rbln_fake_hw_enter(rdev, "mem_page after destroy");
	return vmalloc_to_page(vaddr + offset);
}

/* No engine_run_now: every job goes through push and the completion upcall. */
static const struct rbln_hw_ops rbln_fake_hw_ops = {
	.read_sensors = rbln_fake_read_sensors,
	.engine_push = rbln_fake_engine_push,
	.engine_reset = rbln_fake_engine_reset,
	.device_reset = rbln_fake_device_reset,
	.sync_irq = rbln_fake_sync_irq,
	.mem_alloc = rbln_fake_mem_alloc,
	.mem_free = rbln_fake_mem_free,
	.mem_page = rbln_fake_mem_page,
};

bool rbln_fake_hw_busy(struct rbln_fake_hw *fake, u32 chiplet, enum drm_rbln_engine kind)
{
	bool busy;

	spin_lock(&fake->lock);
	busy = fake->pushed[chiplet][kind];
	spin_unlock(&fake->lock);
	return busy;
}

struct rbln_hw_job *rbln_fake_hw_wait_pushed(struct rbln_fake_hw *fake, u32 chiplet,
					     enum drm_rbln_engine kind)
{
	struct rbln_hw_job *job;

	/* A bound for a broken core, not a figure: run_job comes within a moment. */
	wait_event_timeout(fake->pushed_wait, rbln_fake_hw_busy(fake, chiplet, kind), 10 * HZ);
	spin_lock(&fake->lock);
	job = fake->pushed[chiplet][kind];
	spin_unlock(&fake->lock);
	KUNIT_ASSERT_NOT_NULL_MSG(fake->test, job, "no job pushed to chiplet %u %s", chiplet,
				  rbln_engine_name(kind));
	return job;
}

void rbln_fake_hw_complete(struct rbln_fake_hw *fake, u32 chiplet, enum drm_rbln_engine kind,
			   int status)
{
	struct rbln_hw_job *job = rbln_fake_hw_take(fake, chiplet, kind);
	u32 i;

	KUNIT_ASSERT_NOT_NULL_MSG(fake->test, job, "chiplet %u %s holds no job", chiplet,
				  rbln_engine_name(kind));
	for (i = 0; !status && i < job->count; i++) {
		const struct drm_rbln_copy *c = &job->copies[i];

		memcpy(job->bufs[2 * i + 1].cpu + c->dst_offset,
		       job->bufs[2 * i].cpu + c->src_offset, c->size);
	}
	rbln_hw_job_done(job, status);
}

static void rbln_fake_hw_remove_action(void *data)
{
	struct rbln_fake_hw *fake = data;
	unsigned int i, kind;

	rbln_device_destroy(fake->rdev);
	WRITE_ONCE(fake->destroyed, true);
	/* Removal took back whatever the engines held (engine_reset). */
	for (i = 0; i < RBLN_MAX_CHIPLETS; i++)
		for (kind = 0; kind < DRM_RBLN_ENGINE_COUNT; kind++)
			if (rbln_fake_hw_busy(fake, i, kind))
				rbln_fake_hw_bad(fake, "a job left on an engine after destroy");
}

void rbln_fake_hw_remove(struct rbln_fake_hw *fake)
{
	kunit_release_action(fake->test, rbln_fake_hw_remove_action, fake);
}

static void rbln_fake_hw_put(void *rdev)
{
	rbln_device_put(rdev);
}

/* The last thing the test does: the files, the device and its parent are gone. */
static void rbln_fake_hw_check(void *data)
{
	struct rbln_fake_hw *fake = data;

	/* Buffers a job's end work let go of may still be on their way. */
	wait_event_timeout(fake->pushed_wait,
			   atomic_read(&fake->frees) == atomic_read(&fake->allocs), 10 * HZ);
	KUNIT_EXPECT_EQ_MSG(fake->test, atomic_read(&fake->frees), atomic_read(&fake->allocs),
			    "every backing the core took is freed");
	KUNIT_EXPECT_EQ_MSG(fake->test, atomic_read(&fake->bad_calls), 0, "first: %s",
			    READ_ONCE(fake->bad_call) ?: "-");
}

struct rbln_fake_hw *rbln_fake_hw_create(struct kunit *test, unsigned int chiplets,
					 const u32 *engines)
{
	unsigned int index = RBLN_FAKE_FIRST_INDEX + atomic_inc_return(&rbln_fake_next_index) % 100;
	struct rbln_fake_hw *fake = kunit_kzalloc(test, sizeof(*fake), GFP_KERNEL);
	struct rbln_hw_info *info;
	struct rbln_device *rdev;
	char name[32];

	KUNIT_ASSERT_NOT_NULL(test, fake);
	fake->test = test;
	spin_lock_init(&fake->lock);
	init_waitqueue_head(&fake->pushed_wait);
	/* First, so that it runs last. */
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, rbln_fake_hw_check, fake), 0);

	snprintf(name, sizeof(name), "rbln-fake-%u", index);
	fake->dev = kunit_device_register(test, name);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, fake->dev);

	info = &fake->info;
	info->sku = rbln_sku_by_key(chiplets == 1 ? "atom" : "rebel100");
	KUNIT_ASSERT_NOT_NULL(test, info->sku);
	KUNIT_ASSERT_EQ(test, info->sku->chiplets, chiplets);
	info->index = index;
	info->memory_total = RBLN_FAKE_MEMORY;
	snprintf(info->serial, sizeof(info->serial), "FAKE%06u", index);
	snprintf(info->pci_bus_id, sizeof(info->pci_bus_id), "0000:%02x:00.0", index);
	strscpy(info->firmware_version, "fake", sizeof(info->firmware_version));
	info->job_max_bytes = SZ_1M;
	memcpy(info->engines, engines, chiplets * sizeof(*engines));

	rdev = rbln_device_create(fake->dev, info, &rbln_fake_hw_ops, fake);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, rdev);
	fake->rdev = rdev;
	/* Held to the end of the test, so rdev stays readable after a removal. */
	rbln_device_get(rdev);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, rbln_fake_hw_put, rdev), 0);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, rbln_fake_hw_remove_action, fake), 0);
	return fake;
}
