// SPDX-License-Identifier: GPL-2.0-only
/*
 * The client state machine: exclusive acquisition (acquire, release, drop on
 * close), the client list, stale clients, reclaim and reset.
 */
#include <kunit/test.h>
#include <linux/completion.h>
#include <linux/delay.h>
#include <linux/kthread.h>
#include <linux/sched.h>
#include <linux/sched/mm.h>
#include <linux/sizes.h>
#include <drm/drm_file.h>
#include <drm/drm_gem.h>

#include "../rbln_client.h"
#include "rbln_kunit_sim.h"

static int acquire(struct kunit *test, struct file *file)
{
	struct drm_rbln_acquire a = {};

	return rbln_test_ioctl(test, file, DRM_IOCTL_RBLN_ACQUIRE, &a);
}

static int release(struct kunit *test, struct file *file)
{
	struct drm_rbln_acquire a = {};

	return rbln_test_ioctl(test, file, DRM_IOCTL_RBLN_RELEASE, &a);
}

/* LIST_CLIENTS' entry for @file, as @caller sees it. */
static struct drm_rbln_client client_entry(struct kunit *test, struct file *caller,
					 struct file *file)
{
	struct drm_rbln_client *entries = kunit_kcalloc(test, 8, sizeof(*entries), GFP_KERNEL);
	struct drm_rbln_list_clients l = { .count = 8, .entry_size = sizeof(*entries) };
	void __user *u = rbln_test_user(test, 8 * sizeof(*entries));
	u32 i;

	KUNIT_ASSERT_NOT_NULL(test, entries);
	l.entries = (u64)(uintptr_t)u;
	KUNIT_ASSERT_EQ(test, rbln_test_ioctl(test, caller, DRM_IOCTL_RBLN_LIST_CLIENTS, &l), 0);
	KUNIT_ASSERT_LE(test, l.count, 8U);
	KUNIT_ASSERT_EQ(test, copy_from_user(entries, u, l.count * sizeof(*entries)), 0);
	for (i = 0; i < l.count; i++)
		if (entries[i].client_id == rbln_test_client(file)->id)
			return entries[i];
	KUNIT_FAIL_AND_ABORT(test, "client %llu not listed", rbln_test_client(file)->id);
	return entries[0];
}

static void rbln_client_acquire_release(struct kunit *test)
{
	struct rbln_device *rdev = rbln_test_device(test, "atom 16");
	struct file *a = rbln_test_open(test, rdev), *b = rbln_test_open(test, rdev);
	struct drm_rbln_acquire bad = { .flags = 1 };

	KUNIT_EXPECT_EQ(test, acquire(test, a), 0);
	KUNIT_EXPECT_EQ(test, acquire(test, a), 0);		/* holding it already */
	KUNIT_EXPECT_EQ(test, acquire(test, b), -EBUSY);
	KUNIT_EXPECT_EQ(test, release(test, b), -EINVAL);	/* not the holder */
	KUNIT_EXPECT_PTR_EQ(test, rdev->owner, rbln_test_client(a));
	KUNIT_EXPECT_EQ(test, release(test, a), 0);
	KUNIT_EXPECT_EQ(test, release(test, a), -EINVAL);
	KUNIT_EXPECT_EQ(test, acquire(test, b), 0);

	KUNIT_EXPECT_EQ(test, rbln_test_ioctl(test, a, DRM_IOCTL_RBLN_ACQUIRE, &bad), -EINVAL);
	bad = (struct drm_rbln_acquire){ .reserved = 1 };
	KUNIT_EXPECT_EQ(test, rbln_test_ioctl(test, b, DRM_IOCTL_RBLN_RELEASE, &bad), -EINVAL);
	KUNIT_EXPECT_PTR_EQ(test, rdev->owner, rbln_test_client(b));
}

static void rbln_client_close_drops_acquisition(struct kunit *test)
{
	struct rbln_device *rdev = rbln_test_device(test, "atom 16");
	struct file *a = rbln_test_open(test, rdev), *b = rbln_test_open(test, rdev);

	KUNIT_ASSERT_EQ(test, acquire(test, a), 0);
	rbln_test_close(test, a);
	KUNIT_EXPECT_NULL(test, rdev->owner);
	KUNIT_EXPECT_EQ(test, acquire(test, b), 0);
}

static void rbln_client_list(struct kunit *test)
{
	struct rbln_device *rdev = rbln_test_device(test, "atom 16");
	struct file *a = rbln_test_open(test, rdev), *b = rbln_test_open(test, rdev);
	struct drm_rbln_list_clients l = { .entry_size = sizeof(struct drm_rbln_client) };
	const u32 big = sizeof(struct drm_rbln_client) + 32;
	u8 __user *u = rbln_test_user(test, 2 * big);
	struct drm_rbln_client e;
	u8 tail[32];

	rbln_test_bo(test, a, SZ_1M, 0, 0);
	KUNIT_ASSERT_EQ(test, acquire(test, a), 0);

	/* count 0 asks how many there are. */
	KUNIT_ASSERT_EQ(test, rbln_test_ioctl(test, b, DRM_IOCTL_RBLN_LIST_CLIENTS, &l), 0);
	KUNIT_EXPECT_EQ(test, l.count, 2U);

	e = client_entry(test, b, a);
	KUNIT_EXPECT_EQ(test, e.flags, DRM_RBLN_CLIENT_ACQUIRED);
	KUNIT_EXPECT_EQ(test, e.device_memory, (u64)SZ_1M);
	KUNIT_EXPECT_EQ(test, e.creator_pid, (u32)task_tgid_vnr(current));
	KUNIT_EXPECT_STREQ(test, e.creator_comm, current->comm);
	e = client_entry(test, b, b);
	KUNIT_EXPECT_EQ(test, e.flags, DRM_RBLN_CLIENT_SELF);
	KUNIT_EXPECT_EQ(test, e.device_memory, 0ULL);

	/* A larger element gets its tail zeroed. */
	memset(tail, 0xff, sizeof(tail));
	KUNIT_ASSERT_EQ(test, copy_to_user(u + sizeof(e), tail, sizeof(tail)), 0);
	l = (struct drm_rbln_list_clients){ .count = 2, .entry_size = big,
					    .entries = (u64)(uintptr_t)u };
	KUNIT_ASSERT_EQ(test, rbln_test_ioctl(test, b, DRM_IOCTL_RBLN_LIST_CLIENTS, &l), 0);
	KUNIT_ASSERT_EQ(test, copy_from_user(tail, u + sizeof(e), sizeof(tail)), 0);
	KUNIT_EXPECT_NULL(test, memchr_inv(tail, 0, sizeof(tail)));

	l.entry_size = sizeof(e) - 1;
	KUNIT_EXPECT_EQ(test, rbln_test_ioctl(test, b, DRM_IOCTL_RBLN_LIST_CLIENTS, &l), -EINVAL);
	l.entry_size = 4097;
	KUNIT_EXPECT_EQ(test, rbln_test_ioctl(test, b, DRM_IOCTL_RBLN_LIST_CLIENTS, &l), -EINVAL);
	l = (struct drm_rbln_list_clients){ .entry_size = sizeof(e), .flags = 1 };
	KUNIT_EXPECT_EQ(test, rbln_test_ioctl(test, b, DRM_IOCTL_RBLN_LIST_CLIENTS, &l), -EINVAL);
	l = (struct drm_rbln_list_clients){ .entry_size = sizeof(e), .reserved = 1 };
	KUNIT_EXPECT_EQ(test, rbln_test_ioctl(test, b, DRM_IOCTL_RBLN_LIST_CLIENTS, &l), -EINVAL);
	l = (struct drm_rbln_list_clients){ .entry_size = sizeof(e), .count = 1, .entries = 0x10 };
	KUNIT_EXPECT_EQ(test, rbln_test_ioctl(test, b, DRM_IOCTL_RBLN_LIST_CLIENTS, &l), -EFAULT);
}

/* A live client is reclaimed only with FORCE; then every call on it fails. */
static void rbln_client_reclaim_rules(struct kunit *test)
{
	struct rbln_device *rdev = rbln_test_device(test, "rebel100 64");
	struct file *victim = rbln_test_open(test, rdev), *admin = rbln_test_open(test, rdev);
	struct drm_rbln_reclaim r = {};
	u32 handle;
	u64 freed;

	handle = rbln_test_bo(test, victim, SZ_2M, DRM_RBLN_CHIPLET_INTERLEAVED, DRM_RBLN_BO_EAGER);
	rbln_test_bo(test, victim, SZ_1M, 3, 0);
	rbln_test_bo(test, admin, SZ_1M, 0, 0);
	KUNIT_ASSERT_EQ(test, acquire(test, victim), 0);

	/* Itself. */
	KUNIT_EXPECT_EQ(test, rbln_test_reclaim(test, admin, admin, 0, NULL), -EINVAL);
	/* Not stale. */
	KUNIT_EXPECT_EQ(test, rbln_test_reclaim(test, admin, victim, 0, NULL), -EBUSY);
	KUNIT_EXPECT_EQ(test, rbln_test_reclaim(test, admin, victim, 1U << 1, NULL), -EINVAL);
	r.client_id = U64_MAX;
	KUNIT_EXPECT_EQ(test, rbln_test_ioctl(test, admin, DRM_IOCTL_RBLN_RECLAIM, &r), -ENOENT);
	r = (struct drm_rbln_reclaim){ .client_id = rbln_test_client(victim)->id, .reserved = 1 };
	KUNIT_EXPECT_EQ(test, rbln_test_ioctl(test, admin, DRM_IOCTL_RBLN_RECLAIM, &r), -EINVAL);
	KUNIT_EXPECT_EQ(test, rbln_device_memory_used(rdev), (u64)SZ_4M);

	KUNIT_ASSERT_EQ(test,
			rbln_test_reclaim(test, admin, victim, DRM_RBLN_RECLAIM_FORCE, &freed), 0);
	KUNIT_EXPECT_EQ(test, freed, (u64)SZ_2M + SZ_1M);
	KUNIT_EXPECT_EQ(test, rbln_device_memory_used(rdev), (u64)SZ_1M);
	KUNIT_EXPECT_EQ(test, rbln_device_memory_placed(rdev), 0ULL);
	KUNIT_EXPECT_NULL(test, rdev->owner);
	KUNIT_EXPECT_EQ(test, client_entry(test, admin, victim).flags, DRM_RBLN_CLIENT_REVOKED);
	KUNIT_EXPECT_EQ(test, rbln_test_reclaim(test, admin, victim, DRM_RBLN_RECLAIM_FORCE, NULL),
			-EALREADY);

	/* The revoked file: every rbln call fails, and its buffers have no memory. */
	KUNIT_EXPECT_EQ(test, acquire(test, victim), -ENODEV);
	KUNIT_EXPECT_EQ(test, rbln_test_ioctl(test, victim, DRM_IOCTL_RBLN_BO_INFO,
					      &(struct drm_rbln_bo_info){ .handle = handle }),
			-ENODEV);
	KUNIT_EXPECT_EQ(test, acquire(test, admin), 0);
}

struct opener {
	struct rbln_device *rdev;
	struct file *file;
	struct completion opened;
};

static int rbln_test_opener(void *data)
{
	struct opener *o = data;
	struct drm_device *drm = &o->rdev->drm;

	o->file = mock_drm_getfile(drm->accel ? drm->accel : drm->render, O_RDWR);
	complete(&o->opened);
	return 0;
}

/* The process that opened a file exits while the file lives on: a stale client. */
static void rbln_client_stale_reclaim(struct kunit *test)
{
	struct rbln_device *rdev = rbln_test_device(test, "atom 16");
	struct file *admin = rbln_test_open(test, rdev);
	struct opener o = { .rdev = rdev };
	struct task_struct *t;
	u64 freed;
	int i;

	init_completion(&o.opened);
	t = kthread_run(rbln_test_opener, &o, "rbln-opener");
	KUNIT_ASSERT_FALSE(test, IS_ERR(t));
	wait_for_completion(&o.opened);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, o.file);
	rbln_test_adopt(test, o.file);

	rbln_test_bo(test, o.file, SZ_4M, 0, DRM_RBLN_BO_EAGER);
	KUNIT_ASSERT_EQ(test, acquire(test, o.file), 0);
	/* The opener thread is gone once its pid is released. */
	for (i = 0; i < 500 && !(client_entry(test, admin, o.file).flags & DRM_RBLN_CLIENT_STALE); i++)
		msleep(10);
	KUNIT_ASSERT_EQ(test, client_entry(test, admin, o.file).flags,
			DRM_RBLN_CLIENT_STALE | DRM_RBLN_CLIENT_ACQUIRED);

	KUNIT_ASSERT_EQ(test, rbln_test_reclaim(test, admin, o.file, 0, &freed), 0);
	KUNIT_EXPECT_EQ(test, freed, (u64)SZ_4M);
	KUNIT_EXPECT_EQ(test, rbln_device_memory_used(rdev), 0ULL);
	KUNIT_EXPECT_EQ(test, acquire(test, admin), 0);
}

static void rbln_client_reset(struct kunit *test)
{
	struct rbln_device *rdev = rbln_test_device(test, "rebel100 64");
	struct file *user = rbln_test_open(test, rdev), *admin = rbln_test_open(test, rdev);
	struct drm_rbln_reset r = {};

	rbln_test_bo(test, user, SZ_8M, DRM_RBLN_CHIPLET_INTERLEAVED, DRM_RBLN_BO_EAGER);
	KUNIT_ASSERT_EQ(test, acquire(test, user), 0);
	rbln_sim_fail_next_jobs(rdev, 3);
	rbln_sim_set_chiplet_down(rdev, 2, true);

	KUNIT_EXPECT_EQ(test, rbln_test_ioctl(test, admin, DRM_IOCTL_RBLN_RESET, &r), -EBUSY);
	r = (struct drm_rbln_reset){ .flags = 1U << 7 };
	KUNIT_EXPECT_EQ(test, rbln_test_ioctl(test, admin, DRM_IOCTL_RBLN_RESET, &r), -EINVAL);
	r = (struct drm_rbln_reset){ .flags = DRM_RBLN_RESET_FORCE, .revoked = 1 };
	KUNIT_EXPECT_EQ(test, rbln_test_ioctl(test, admin, DRM_IOCTL_RBLN_RESET, &r), -EINVAL);
	KUNIT_EXPECT_EQ(test, rbln_device_memory_used(rdev), (u64)SZ_8M);

	r = (struct drm_rbln_reset){ .flags = DRM_RBLN_RESET_FORCE };
	KUNIT_ASSERT_EQ(test, rbln_test_ioctl(test, admin, DRM_IOCTL_RBLN_RESET, &r), 0);
	KUNIT_EXPECT_EQ(test, r.revoked, 1U);
	KUNIT_EXPECT_EQ(test, rbln_device_memory_used(rdev), 0ULL);
	KUNIT_EXPECT_NULL(test, rdev->owner);
	/* Fault injection is cleared. */
	KUNIT_EXPECT_EQ(test, atomic_read(&rbln_test_sim(rdev)->fail_next_jobs), 0);
	KUNIT_EXPECT_FALSE(test, READ_ONCE(rbln_test_sim(rdev)->chiplet_down[2]));
	KUNIT_EXPECT_FALSE(test, READ_ONCE(rdev->chiplets[2].down));
	KUNIT_EXPECT_EQ(test, rbln_device_status(rdev), DRM_RBLN_STATUS_READY);
	KUNIT_EXPECT_EQ(test, acquire(test, user), -ENODEV);
	KUNIT_EXPECT_EQ(test, acquire(test, admin), 0);
	/* Nothing left to revoke. */
	r = (struct drm_rbln_reset){ .flags = DRM_RBLN_RESET_FORCE };
	KUNIT_ASSERT_EQ(test, rbln_test_ioctl(test, admin, DRM_IOCTL_RBLN_RESET, &r), 0);
	KUNIT_EXPECT_EQ(test, r.revoked, 0U);
}

/* Revoking a client whose job waits on a hung engine: the job ends, then the memory goes. */
static void rbln_client_revoke_with_job_in_flight(struct kunit *test)
{
	struct rbln_device *rdev = rbln_test_device(test, "atom 16");
	struct file *user = rbln_test_open(test, rdev), *admin = rbln_test_open(test, rdev);
	u32 src = rbln_test_bo(test, user, SZ_128K, 0, 0);
	u32 dst = rbln_test_bo(test, user, SZ_128K, 0, 0);
	struct drm_rbln_copy c = { .src_handle = src, .dst_handle = dst, .size = SZ_128K };
	struct drm_rbln_submit s = {
		.engine = DRM_RBLN_ENGINE_NEURAL_DMA, .copy_count = 1, .copy_size = sizeof(c),
		.copies = (u64)(uintptr_t)rbln_test_user_copy(test, &c, sizeof(c)),
	};
	u64 freed;
	rbln_sim_set_hang(rdev, 0, DRM_RBLN_ENGINE_NEURAL_DMA, true);
	KUNIT_ASSERT_EQ(test, rbln_test_ioctl(test, user, DRM_IOCTL_RBLN_SUBMIT, &s), 0);
	KUNIT_ASSERT_EQ(test, rbln_test_reclaim(test, admin, user, DRM_RBLN_RECLAIM_FORCE, &freed),
			0);
	KUNIT_EXPECT_EQ(test, freed, (u64)SZ_256K);
	KUNIT_EXPECT_EQ(test, atomic_read(&rbln_test_client(user)->inflight), 0);
	KUNIT_EXPECT_EQ(test, rbln_device_memory_used(rdev), 0ULL);
}

/* While a file holds the device, the others can look but not allocate or submit. */
static void rbln_client_acquire_is_exclusive(struct kunit *test)
{
	struct rbln_device *rdev = rbln_test_device(test, "atom 16");
	struct file *holder = rbln_test_open(test, rdev), *other = rbln_test_open(test, rdev);
	u32 src = rbln_test_bo(test, other, SZ_4K, 0, 0), dst = rbln_test_bo(test, other, SZ_4K, 0, 0);
	struct drm_rbln_copy c = { .src_handle = src, .dst_handle = dst, .size = SZ_4K };
	struct drm_rbln_submit s = {
		.engine = DRM_RBLN_ENGINE_NEURAL_DMA, .copy_count = 1, .copy_size = sizeof(c),
		.copies = (u64)(uintptr_t)rbln_test_user_copy(test, &c, sizeof(c)),
	};
	struct drm_rbln_bo_create create = { .size = SZ_4K };
	struct drm_rbln_bo_info info = { .handle = src };

	KUNIT_ASSERT_EQ(test, acquire(test, holder), 0);
	KUNIT_EXPECT_EQ(test, rbln_test_ioctl(test, other, DRM_IOCTL_RBLN_BO_CREATE, &create), -EBUSY);
	KUNIT_EXPECT_EQ(test, rbln_test_ioctl(test, other, DRM_IOCTL_RBLN_SUBMIT, &s), -EBUSY);
	KUNIT_EXPECT_EQ(test, rbln_test_ioctl(test, other, DRM_IOCTL_RBLN_BO_INFO, &info), 0);
	rbln_test_bo(test, holder, SZ_4K, 0, 0);
	KUNIT_ASSERT_EQ(test, release(test, holder), 0);
	KUNIT_EXPECT_EQ(test, rbln_test_ioctl(test, other, DRM_IOCTL_RBLN_BO_CREATE, &create), 0);
	KUNIT_EXPECT_EQ(test, rbln_test_ioctl(test, other, DRM_IOCTL_RBLN_SUBMIT, &s), 0);
}

/* A reclaim takes the host buffers too, and deletes the victim's handles. */
static void rbln_client_reclaim_takes_everything(struct kunit *test)
{
	struct rbln_device *rdev = rbln_test_device(test, "atom 16");
	struct file *victim = rbln_test_open(test, rdev), *admin = rbln_test_open(test, rdev);
	u32 dev = rbln_test_bo(test, victim, SZ_1M, 0, DRM_RBLN_BO_EAGER);
	u32 host = rbln_test_bo(test, victim, SZ_1M, 0, DRM_RBLN_BO_HOST | DRM_RBLN_BO_EAGER);
	struct rbln_bo *host_bo = rbln_test_lookup(test, victim, host);	/* keeps it readable */
	u64 freed;

	KUNIT_EXPECT_EQ(test, client_entry(test, admin, victim).device_memory, (u64)SZ_1M);
	KUNIT_ASSERT_EQ(test,
			rbln_test_reclaim(test, admin, victim, DRM_RBLN_RECLAIM_FORCE, &freed), 0);
	KUNIT_EXPECT_EQ(test, freed, (u64)SZ_1M);	/* device memory only */
	KUNIT_EXPECT_TRUE(test, host_bo->revoked);
	KUNIT_EXPECT_NULL(test, host_bo->vaddr);
	KUNIT_EXPECT_NULL(test, drm_gem_object_lookup(victim->private_data, dev));
	KUNIT_EXPECT_NULL(test, drm_gem_object_lookup(victim->private_data, host));
	KUNIT_EXPECT_EQ(test, client_entry(test, admin, victim).device_memory, 0ULL);
	KUNIT_EXPECT_EQ(test, rbln_device_memory_used(rdev), 0ULL);
}

struct lister {
	struct file *file;
	struct mm_struct *mm;		/* where args and entries live */
	struct drm_rbln_list_clients __user *args;
	struct drm_rbln_client __user *entries;
	bool stop;
	unsigned long calls;	/* that listed the clients */
	unsigned long others;	/* of those, while another file was open */
	long error;		/* of the call that stopped it */
	struct completion done;
};

static int rbln_test_lister(void *data)
{
	struct lister *l = data;
	struct drm_rbln_list_clients args = {
		.count = 16, .entry_size = sizeof(struct drm_rbln_client),
		.entries = (u64)(uintptr_t)l->entries,
	}, out;

	kthread_use_mm(l->mm);
	while (!READ_ONCE(l->stop)) {
		if (copy_to_user(l->args, &args, sizeof(args))) {
			l->error = -EFAULT;
			break;
		}
		l->error = l->file->f_op->unlocked_ioctl(l->file, DRM_IOCTL_RBLN_LIST_CLIENTS,
							 (unsigned long)l->args);
		if (!l->error && copy_from_user(&out, l->args, sizeof(out)))
			l->error = -EFAULT;
		if (l->error)
			break;
		l->calls++;
		l->others += out.count > 1;
		cond_resched();
	}
	kthread_unuse_mm(l->mm);
	complete(&l->done);
	return 0;
}

/*
 * LIST_CLIENTS describes other files while they close: it must never walk a
 * handle table the DRM core is freeing (KASAN watches).
 */
static void rbln_client_list_while_files_close(struct kunit *test)
{
	struct rbln_device *rdev = rbln_test_device(test, "atom 64");
	struct lister l = { .file = rbln_test_open(test, rdev) };
	struct task_struct *t;
	int round, i;

	l.args = rbln_test_user(test, sizeof(*l.args));
	l.entries = rbln_test_user(test, 16 * sizeof(*l.entries));
	l.mm = current->mm;		/* the test's, made by its first user mapping */
	KUNIT_ASSERT_NOT_NULL(test, l.mm);
	init_completion(&l.done);
	t = kthread_run(rbln_test_lister, &l, "rbln-lister");
	KUNIT_ASSERT_FALSE(test, IS_ERR(t));
	for (round = 0; round < 100; round++) {
		struct file *f = rbln_test_open(test, rdev);

		for (i = 0; i < 16; i++)
			rbln_test_bo(test, f, SZ_4K, 0, 0);
		rbln_test_close(test, f);
	}
	WRITE_ONCE(l.stop, true);
	wait_for_completion(&l.done);
	KUNIT_EXPECT_EQ(test, l.error, 0L);
	KUNIT_EXPECT_GT(test, l.calls, 0UL);
	KUNIT_EXPECT_GT_MSG(test, l.others, 0UL, "no LIST_CLIENTS saw another file: no race ran");
	KUNIT_EXPECT_EQ(test, rbln_device_memory_used(rdev), 0ULL);
}

static struct kunit_case rbln_client_cases[] = {
	KUNIT_CASE(rbln_client_acquire_release),
	KUNIT_CASE(rbln_client_close_drops_acquisition),
	KUNIT_CASE(rbln_client_list),
	KUNIT_CASE(rbln_client_reclaim_rules),
	KUNIT_CASE(rbln_client_stale_reclaim),
	KUNIT_CASE(rbln_client_reset),
	KUNIT_CASE(rbln_client_revoke_with_job_in_flight),
	KUNIT_CASE(rbln_client_acquire_is_exclusive),
	KUNIT_CASE(rbln_client_reclaim_takes_everything),
	KUNIT_CASE(rbln_client_list_while_files_close),
	{}
};

static struct kunit_suite rbln_client_suite = {
	.name = "rbln_client",
	.test_cases = rbln_client_cases,
};
kunit_test_suite(rbln_client_suite);
