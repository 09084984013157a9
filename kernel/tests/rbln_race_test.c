// SPDX-License-Identifier: GPL-2.0-only
/*
 * Races a few instructions wide, forced through the test points of
 * rbln_test_point.h: a test stops one thread at the point and runs the other
 * side of the race right there, so the interleaving that broke happens every
 * time.
 */
#include <kunit/test.h>
#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/err.h>
#include <linux/kthread.h>
#include <linux/mm.h>
#include <linux/mman.h>
#include <linux/sched/signal.h>
#include <linux/sizes.h>
#include <linux/uaccess.h>
#include <drm/drm_syncobj.h>
#include <drm/gpu_scheduler.h>

#include "../rbln_job.h"
#include "rbln_kunit_sim.h"

/* The second RECLAIM, run where the first has chosen its victim. */
static struct {
	struct kunit *test;
	struct file *admin, *victim;
	bool ran;
	int err;
	u64 freed;
} second_reclaim;

static int rbln_race_reclaim_again(enum rbln_test_point_id point)
{
	if (point != RBLN_TP_RECLAIM_CHOSEN)
		return 0;
	WRITE_ONCE(rbln_test_point_hook, NULL);	/* the second one passes here too */
	second_reclaim.err = rbln_test_reclaim(second_reclaim.test, second_reclaim.admin,
					       second_reclaim.victim, DRM_RBLN_RECLAIM_FORCE,
					       &second_reclaim.freed);
	second_reclaim.ran = true;
	return 0;
}

/*
 * Two RECLAIMs of one client: the one that chose it revokes it; the other,
 * even when it comes before any revoking began, is told -EALREADY (it used
 * to revoke it a second time: 0 bytes, a second RECLAIMED event).
 */
static void rbln_race_reclaims_of_one_client(struct kunit *test)
{
	struct rbln_device *rdev = rbln_test_device(test, "atom 16");
	struct file *admin = rbln_test_open(test, rdev), *victim = rbln_test_open(test, rdev);
	u64 freed = 0;

	rbln_test_bo(test, victim, SZ_1M, 0, DRM_RBLN_BO_EAGER);
	second_reclaim = (typeof(second_reclaim)){ .test = test, .admin = admin, .victim = victim };
	rbln_test_set_point_hook(test, rbln_race_reclaim_again);

	KUNIT_EXPECT_EQ(test,
			rbln_test_reclaim(test, admin, victim, DRM_RBLN_RECLAIM_FORCE, &freed), 0);
	KUNIT_ASSERT_TRUE_MSG(test, second_reclaim.ran, "the test point was not reached");
	KUNIT_EXPECT_EQ(test, second_reclaim.err, -EALREADY);
	KUNIT_EXPECT_EQ(test, freed, (u64)SZ_1M);
	KUNIT_EXPECT_EQ(test, rbln_device_memory_used(rdev), 0ULL);
}

/*
 * The other side of a race, in a thread of its own: started at the test
 * point, and given a second there.  One that does not wait for the thread
 * at the point is over well before that; one that does waits, and the
 * thread goes on after the second.
 */
struct other_side {
	void (*run)(void);
	enum rbln_test_point_id point;	/* where it starts */
	struct completion done;
	bool started;
};

/* The side a test armed; one at a time, as the hook. */
static struct other_side *armed_side;

static int rbln_race_other_side_fn(void *data)
{
	struct other_side *o = data;

	o->run();
	complete_all(&o->done);		/* the test point and the test both wait */
	return 0;
}

static int rbln_race_start_armed_side(enum rbln_test_point_id point)
{
	struct other_side *o = armed_side;

	if (point != o->point)
		return 0;
	WRITE_ONCE(rbln_test_point_hook, NULL);
	o->started = !IS_ERR(kthread_run(rbln_race_other_side_fn, o, "rbln-race"));
	if (o->started)
		wait_for_completion_timeout(&o->done, HZ);
	return 0;
}

/* Has @run start in a thread of its own when a thread passes @point. */
static void rbln_race_other_side_at(struct kunit *test, struct other_side *o,
				    enum rbln_test_point_id point, void (*run)(void))
{
	o->run = run;
	o->point = point;
	o->started = false;
	init_completion(&o->done);
	armed_side = o;
	rbln_test_set_point_hook(test, rbln_race_start_armed_side);
}

/* Asserts that the other side was started and has ended. */
static void rbln_race_other_side_ended(struct kunit *test, struct other_side *o)
{
	KUNIT_ASSERT_TRUE_MSG(test, o->started, "the test point was not reached");
	KUNIT_ASSERT_GT(test, wait_for_completion_timeout(&o->done, 30 * HZ), 0UL);
}

/* A revocation, started where a fault found its page. */
static struct {
	struct rbln_device *rdev;
	u64 client_id;
	struct other_side side;
} fault_revoke;

static void rbln_race_revoke(void)
{
	rbln_mem_revoke_client(fault_revoke.rdev, fault_revoke.client_id);
}

/*
 * A revocation racing a CPU fault on the buffer: once it is over, no page of
 * the buffer is mapped (the fault used to fill the page table after dropping
 * the lock the revocation takes, so the zap missed the page and it stayed
 * mapped after the backing was freed).
 */
static void rbln_race_revoke_and_fault(struct kunit *test)
{
	struct rbln_device *rdev = rbln_test_device(test, "atom 16");
	struct file *file = rbln_test_open(test, rdev);
	struct drm_rbln_bo_info info = {};
	unsigned long addr;
	u8 byte;

	info.handle = rbln_test_bo(test, file, SZ_64K, 0, DRM_RBLN_BO_EAGER);
	KUNIT_ASSERT_EQ(test, rbln_test_ioctl(test, file, DRM_IOCTL_RBLN_BO_INFO, &info), 0);
	KUNIT_ASSERT_NOT_NULL(test, current->mm);	/* made by rbln_test_ioctl's user memory */
	addr = vm_mmap(file, 0, SZ_64K, PROT_READ, MAP_SHARED, info.mmap_offset);
	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR_VALUE(addr), "mmap: %ld", (long)addr);

	fault_revoke.rdev = rdev;
	fault_revoke.client_id = rbln_test_client(file)->id;
	rbln_race_other_side_at(test, &fault_revoke.side, RBLN_TP_FAULT_FOUND, rbln_race_revoke);

	/* Whether this read sees the page depends on who won; either is right. */
	if (copy_from_user(&byte, (void __user *)addr, 1))
		byte = 0;
	rbln_race_other_side_ended(test, &fault_revoke.side);
	KUNIT_EXPECT_NE_MSG(test, copy_from_user(&byte, (void __user *)addr, 1), 0UL,
			    "a page of a revoked buffer is still mapped");
	KUNIT_EXPECT_EQ(test, vm_munmap(addr, SZ_64K), 0);
}

/* LIST_CLIENTS, run where a file being released has closed its second handle. */
static struct {
	struct rbln_device *rdev;
	struct rbln_client *admin;
	u64 victim_id;
	unsigned int closed;
	u32 listed;	/* clients listed there */
	bool victim_listed;
} list_in_release;

static int rbln_race_list_in_release(enum rbln_test_point_id point)
{
	struct drm_rbln_client entries[4];
	u32 i;

	if (point != RBLN_TP_HANDLE_CLOSED || ++list_in_release.closed < 2)
		return 0;
	WRITE_ONCE(rbln_test_point_hook, NULL);
	mutex_lock(&list_in_release.rdev->clients_lock);
	list_in_release.listed = rbln_client_snapshot(list_in_release.rdev, list_in_release.admin,
						      entries, ARRAY_SIZE(entries));
	mutex_unlock(&list_in_release.rdev->clients_lock);
	for (i = 0; i < min_t(u32, list_in_release.listed, ARRAY_SIZE(entries)); i++)
		if (entries[i].client_id == list_in_release.victim_id)
			list_in_release.victim_listed = true;
	return 0;
}

/*
 * LIST_CLIENTS while a file is released, where the DRM core has closed two
 * of its three handles and freed their buffers: the file is no longer listed
 * (it is unlisted as its release begins).  It used to stay listed until
 * postclose, and its entry was made by walking its handle table, into the
 * freed buffers: KASAN slab-use-after-free.
 */
static void rbln_race_list_while_a_file_is_released(struct kunit *test)
{
	struct rbln_device *rdev = rbln_test_device(test, "atom 16");
	struct file *admin = rbln_test_open(test, rdev), *victim = rbln_test_open(test, rdev);

	rbln_test_bo(test, victim, SZ_64K, 0, DRM_RBLN_BO_EAGER);
	rbln_test_bo(test, victim, SZ_128K, 0, DRM_RBLN_BO_EAGER);
	rbln_test_bo(test, victim, SZ_256K, 0, DRM_RBLN_BO_EAGER);
	list_in_release = (typeof(list_in_release)){
		.rdev = rdev, .admin = rbln_test_client(admin),
		.victim_id = rbln_test_client(victim)->id };
	rbln_test_set_point_hook(test, rbln_race_list_in_release);

	rbln_test_close(test, victim);
	KUNIT_ASSERT_EQ_MSG(test, list_in_release.closed, 2U, "the test point was not reached");
	KUNIT_EXPECT_EQ(test, list_in_release.listed, 1U);	/* the admin's file */
	KUNIT_EXPECT_FALSE(test, list_in_release.victim_listed);
	KUNIT_EXPECT_EQ(test, rbln_device_memory_used(rdev), 0ULL);
}

/* Removal of the device, started where RESET is about to recover it. */
static struct {
	u32 id;
	struct other_side side;
} reset_removal;

static void rbln_race_remove(void)
{
	rbln_sim_del_device(reset_removal.id);
}

/*
 * RESET racing removal, removed where RESET is about to recover it: the device
 * stays FINISH and RESET says it is gone.  RESET used to recover outside
 * drm_dev_enter(), and then turned FINISH back into READY (with a uevent for
 * the removed device).  Removal no longer waits for a RESET's drain (a killed
 * admin must not hold it up), so it ends first here and the recovery is
 * refused.
 */
static void rbln_race_reset_and_removal(struct kunit *test)
{
	struct rbln_device *rdev = rbln_test_device(test, "atom 16");
	struct file *admin = rbln_test_open(test, rdev);
	struct drm_rbln_reset reset = { .flags = DRM_RBLN_RESET_FORCE };

	reset_removal.id = rdev->info.index;
	rbln_race_other_side_at(test, &reset_removal.side, RBLN_TP_RESET_RECOVERING,
				rbln_race_remove);

	KUNIT_EXPECT_EQ(test, rbln_test_ioctl(test, admin, DRM_IOCTL_RBLN_RESET, &reset), -ENODEV);
	rbln_race_other_side_ended(test, &reset_removal.side);
	KUNIT_EXPECT_EQ(test, atomic_read(&rdev->status), DRM_RBLN_STATUS_FINISH);
}

/*
 * A WAIT asleep on a job's fence when removal kills the job, held where the
 * fence has signalled but free_job has not ended the job yet.
 */
static struct {
	struct rbln_device *rdev;
	struct file *file;
	struct rbln_bo *dst;
	struct dma_fence *input, *done;
	struct drm_rbln_wait wait;
	int wait_ret;
	unsigned int dst_refs;		/* the buffer's references when WAIT returned */
	bool wait_at_end;		/* WAIT passed RBLN_TP_WAIT_ENDING */
	bool returned_before_end;
	bool waiting, removing;		/* threads started */
	struct completion waited, removed;
	u32 id;
} killed;

/* WAIT as a process already inside the ioctl when removal began (past drm_ioctl's checks). */
static int rbln_race_waiter(void *unused)
{
	killed.wait_ret = rbln_ioctl_wait(&killed.rdev->drm, &killed.wait,
					  killed.file->private_data);
	killed.dst_refs = kref_read(&killed.dst->base.refcount);
	complete_all(&killed.waited);
	return 0;
}

/* The remover: a thread with SIGKILL pending, as a killed process would be. */
static int rbln_race_killed_remover(void *unused)
{
	/*
	 * The entity's flush waits (killably) for the queue to drain; a fatal
	 * signal cuts it short, and the scheduler kills what is still queued.
	 */
	allow_signal(SIGKILL);
	send_sig(SIGKILL, current, 1);
	rbln_sim_del_device(killed.id);
	flush_signals(current);
	complete_all(&killed.removed);
	return 0;
}

static int rbln_race_hold_killed_job(enum rbln_test_point_id point)
{
	int i;

	if (point == RBLN_TP_WAIT_ENDING) {
		WRITE_ONCE(killed.wait_at_end, true);
	} else if (point == RBLN_TP_KILLED_JOB_ENDING) {
		/* The fence woke WAIT: let it get to the job's end, then give it a second. */
		for (i = 0; i < 3000 && !READ_ONCE(killed.wait_at_end); i++)
			msleep(10);
		killed.returned_before_end = wait_for_completion_timeout(&killed.waited, HZ);
	}
	return 0;
}

/* Cleanup, before the test's references go: the threads end once the input signals. */
static void rbln_race_join_killed(void *unused)
{
	dma_fence_signal(killed.input);
	if (killed.removing)
		wait_for_completion(&killed.removed);
	if (killed.waiting)
		wait_for_completion(&killed.waited);
}

static const char *rbln_race_fence_name(struct dma_fence *fence)
{
	return "rbln-race-input";
}

static const struct dma_fence_ops rbln_race_fence_ops = {
	.get_driver_name = rbln_race_fence_name,
	.get_timeline_name = rbln_race_fence_name,
};

static DEFINE_SPINLOCK(rbln_race_fence_lock);

/* A syncobj of @file holding a fence only the test signals; returns its handle. */
static u32 rbln_race_input(struct kunit *test, struct file *file, struct dma_fence **fence)
{
	struct drm_syncobj_create create = {};
	struct drm_syncobj *syncobj;
	struct dma_fence *f = kzalloc(sizeof(*f), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, f);
	dma_fence_init(f, &rbln_race_fence_ops, &rbln_race_fence_lock, dma_fence_context_alloc(1), 1);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, rbln_test_put_fence, f), 0);
	KUNIT_ASSERT_EQ(test, rbln_test_ioctl(test, file, DRM_IOCTL_SYNCOBJ_CREATE, &create), 0);
	syncobj = drm_syncobj_find(file->private_data, create.handle);
	KUNIT_ASSERT_NOT_NULL(test, syncobj);
	drm_syncobj_replace_fence(syncobj, f);
	drm_syncobj_put(syncobj);
	*fence = f;
	return create.handle;
}

/* Whether someone waits on @fence (WAIT's sleep adds a callback). */
static bool rbln_race_fence_waited_on(struct dma_fence *fence)
{
	unsigned long flags;
	bool waited;

	spin_lock_irqsave(fence->lock, flags);
	waited = !list_empty(&fence->cb_list);
	spin_unlock_irqrestore(fence->lock, flags);
	return waited;
}

/*
 * Removal by a killed process while a job waits for its input, with a WAIT
 * for the job asleep: the scheduler kills the job (its fence fails with
 * -ESRCH, and gets a parent of ours for the pins), and the WAIT, woken by
 * that fence, returns only once the job has ended: status -ENODEV, its
 * buffers given back.  WAIT used to return at once there (it flushed an end
 * work not queued yet), with the job's status unset and its buffers held.
 */
static void rbln_race_wait_for_a_killed_job(struct kunit *test)
{
	struct rbln_device *rdev = rbln_test_device(test, "rebel100 64");
	struct file *file = rbln_test_open(test, rdev);
	struct rbln_client *client = rbln_test_client(file);
	u32 src = rbln_test_bo(test, file, SZ_64K, 0, DRM_RBLN_BO_EAGER);
	u32 dst = rbln_test_bo(test, file, SZ_64K, 0, DRM_RBLN_BO_EAGER);
	struct drm_rbln_copy copy = { .src_handle = src, .dst_handle = dst, .size = SZ_4K };
	struct drm_rbln_sync in = {};
	struct drm_rbln_submit submit = {
		.engine = DRM_RBLN_ENGINE_TASK_DMA, .copy_count = 1, .copy_size = sizeof(copy),
		.copies = (u64)(uintptr_t)rbln_test_user_copy(test, &copy, sizeof(copy)),
		.in_sync_count = 1,
	};
	unsigned int refs;
	int i;

	killed = (typeof(killed)){ .rdev = rdev, .file = file, .id = rdev->info.index };
	init_completion(&killed.waited);
	init_completion(&killed.removed);
	killed.dst = rbln_test_lookup(test, file, dst);
	in.handle = rbln_race_input(test, file, &killed.input);
	submit.in_syncs = (u64)(uintptr_t)rbln_test_user_copy(test, &in, sizeof(in));
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, rbln_race_join_killed, NULL), 0);

	refs = kref_read(&killed.dst->base.refcount);
	KUNIT_ASSERT_EQ(test, rbln_test_ioctl(test, file, DRM_IOCTL_RBLN_SUBMIT, &submit), 0);
	killed.done = rbln_test_job_fence(test, file, submit.seqno);
	rbln_test_set_point_hook(test, rbln_race_hold_killed_job);

	killed.wait = (struct drm_rbln_wait){ .seqno = submit.seqno, .timeout_ns = 30LL * NSEC_PER_SEC };
	killed.waiting = !IS_ERR(kthread_run(rbln_race_waiter, NULL, "rbln-race-wait"));
	KUNIT_ASSERT_TRUE(test, killed.waiting);
	for (i = 0; i < 3000 && !rbln_race_fence_waited_on(killed.done); i++)
		msleep(10);
	KUNIT_ASSERT_TRUE_MSG(test, rbln_race_fence_waited_on(killed.done), "WAIT is not asleep");

	killed.removing = !IS_ERR(kthread_run(rbln_race_killed_remover, NULL, "rbln-race-rm"));
	KUNIT_ASSERT_TRUE(test, killed.removing);
	/* The job is killed as its entity goes; only then may its input signal. */
	for (i = 0; i < 3000 && READ_ONCE(client->entities[0][DRM_RBLN_ENGINE_TASK_DMA]); i++)
		msleep(10);
	KUNIT_EXPECT_NULL_MSG(test, READ_ONCE(client->entities[0][DRM_RBLN_ENGINE_TASK_DMA]),
			      "the entity was not destroyed: the remover's flush was not cut short");
	dma_fence_signal(killed.input);
	KUNIT_ASSERT_GT_MSG(test, wait_for_completion_timeout(&killed.removed, 30 * HZ), 0UL,
			    "the device was not removed");
	KUNIT_ASSERT_GT_MSG(test, wait_for_completion_timeout(&killed.waited, 30 * HZ), 0UL,
			    "WAIT did not return");

	KUNIT_EXPECT_EQ(test, killed.done->error, -ESRCH);	/* killed, not run */
	KUNIT_EXPECT_NOT_NULL(test, to_drm_sched_fence(killed.done)->parent);	/* pins of ours */
	KUNIT_EXPECT_TRUE_MSG(test, READ_ONCE(killed.wait_at_end), "the test point was not reached");
	KUNIT_EXPECT_FALSE_MSG(test, killed.returned_before_end,
			       "WAIT returned before the killed job ended");
	KUNIT_EXPECT_EQ(test, killed.wait_ret, 0);
	KUNIT_EXPECT_EQ(test, killed.wait.status, -ENODEV);
	KUNIT_EXPECT_EQ_MSG(test, killed.dst_refs, refs, "the job still held its buffer");
}

static struct kunit_case rbln_race_cases[] = {
	KUNIT_CASE(rbln_race_reclaims_of_one_client),
	KUNIT_CASE(rbln_race_revoke_and_fault),
	KUNIT_CASE(rbln_race_list_while_a_file_is_released),
	KUNIT_CASE(rbln_race_reset_and_removal),
	KUNIT_CASE(rbln_race_wait_for_a_killed_job),
	{}
};

static struct kunit_suite rbln_race_suite = {
	.name = "rbln_race",
	.test_cases = rbln_race_cases,
};
kunit_test_suite(rbln_race_suite);
