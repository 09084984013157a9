// SPDX-License-Identifier: GPL-2.0-only
/*
 * Open files ("clients") of a device: who opened them, whether one holds the
 * device exclusively (ACQUIRE), and the list user space reads to explain a
 * busy device and to find stale clients: files whose opening process has
 * exited while the file lives on (inherited by a child, passed over a socket,
 * held by a stuck process).
 */
#include <linux/capability.h>
#include <linux/cred.h>
#include <linux/idr.h>
#include <linux/pid.h>
#include <linux/slab.h>
#include <linux/string.h>
#include <linux/uaccess.h>
#include <drm/drm_drv.h>
#include <drm/drm_file.h>
#include <drm/drm_gem.h>
#include <drm/drm_print.h>

#include "rbln_client.h"
#include "rbln_compat.h"
#include "rbln_device.h"
#include "rbln_events.h"
#include "rbln_gem.h"
#include "rbln_job.h"
#include "rbln_test_point.h"
#include "rbln_times.h"

#define RBLN_CLIENT_ENTRY_MAX	4096

static void rbln_client_release(struct kref *ref)
{
	struct rbln_client *client = container_of(ref, struct rbln_client, ref);

	put_pid(client->creator);
	rbln_times_free(client);
	xa_destroy(&client->jobs);
	mutex_destroy(&client->lock);
	kfree(client);
}

void rbln_client_put(struct rbln_client *client)
{
	kref_put(&client->ref, rbln_client_release);
}

static void rbln_client_event(struct rbln_client *client, u32 type, u64 bytes)
{
	struct rbln_event ev = {
		.type = type, .device = client->rdev->info.index,
		.has = RBLN_EV_CLIENT | (type == RBLN_GENL_EVENT_RECLAIMED ? RBLN_EV_BYTES : 0),
		.client = client->id, .pid = pid_nr(client->creator), .bytes = bytes,
	};

	rbln_event_send(&ev);
}

/* Drops the device's acquisition if @client holds it; clients_lock held. */
static void rbln_client_drop_acquisition(struct rbln_client *client)
{
	lockdep_assert_held(&client->rdev->clients_lock);
	if (client->rdev->owner != client)
		return;
	WRITE_ONCE(client->rdev->owner, NULL);
	rbln_client_event(client, RBLN_GENL_EVENT_RELEASED, 0);
}

/* The DRM core's id where it has one, so the ioctls and fdinfo agree. */
static u64 rbln_client_id(struct drm_file *file)
{
#if RBLN_HAVE_DRM_FDINFO
	return file->client_id;
#else
	static atomic64_t next_id = ATOMIC64_INIT(0);

	return atomic64_inc_return(&next_id);
#endif
}

int rbln_client_open(struct drm_device *drm, struct drm_file *file)
{
	struct rbln_device *rdev = to_rbln_device(drm);
	struct rbln_client *client;
	unsigned int i;

	client = kzalloc(sizeof(*client), GFP_KERNEL_ACCOUNT);
	if (!client)
		return -ENOMEM;
	kref_init(&client->ref);
	client->rdev = rdev;
	client->file = file;
	client->id = rbln_client_id(file);
	client->creator = get_task_pid(current, PIDTYPE_TGID);
	get_task_comm(client->creator_comm, current);
	client->uid = current_uid();
	rbln_client_touch(client);
	atomic64_set(&client->device_memory, 0);
	atomic_set(&client->buffers, 0);
	atomic64_set(&client->buffer_bytes, 0);
	mutex_init(&client->lock);
	xa_init(&client->jobs);
	atomic_set(&client->inflight, 0);
	atomic_set(&client->tracked, 0);
	init_waitqueue_head(&client->idle);
	INIT_LIST_HEAD(&client->entities_link);
	for (i = 0; i < DRM_RBLN_ENGINE_COUNT; i++)
		atomic64_set(&client->engine_busy_ns[i], 0);
	file->driver_priv = client;

	mutex_lock(&rdev->clients_lock);
	list_add_tail(&client->link, &rdev->clients);
	mutex_unlock(&rdev->clients_lock);
	return 0;
}

/*
 * Called as the file's release begins, before the DRM core frees its handle
 * table: from then on LIST_CLIENTS and revocation, which look at other files,
 * no longer find it.
 */
void rbln_client_unlist(struct rbln_client *client)
{
	mutex_lock(&client->rdev->clients_lock);
	list_del_init(&client->link);
	/*
	 * Its acquisition ends here too: the file can make no more calls, and
	 * while its jobs drain others' ACQUIRE would fail with -EBUSY and no
	 * holder to show in LIST_CLIENTS.
	 */
	rbln_client_drop_acquisition(client);
	mutex_unlock(&client->rdev->clients_lock);
}

/* Its jobs drained: the rest of its close. */
static void rbln_client_close_drained(struct rbln_client *client)
{
	struct rbln_device *rdev = client->rdev;

	rbln_client_entities_fini(client);
	mutex_lock(&rdev->clients_lock);
	rbln_client_drop_acquisition(client);
	list_del_init(&client->link);	/* a failed open is never released */
	mutex_unlock(&rdev->clients_lock);
	rbln_client_put(client);
}

static void rbln_client_close_work(struct work_struct *work)
{
	struct rbln_client *client = container_of(work, struct rbln_client, close_work);
	struct drm_device *drm = &client->rdev->drm;

	rbln_client_drain_jobs(client);
	rbln_client_close_drained(client);
	drm_dev_put(drm);
}

/*
 * The file's last close.  A killed closer is not kept for its jobs (a hung
 * engine's job lasts until the timeout): they finish in a work item, which
 * holds the device until then; module unload waits for it (rbln_jobs_fini).
 */
void rbln_client_close(struct drm_device *drm, struct drm_file *file)
{
	struct rbln_client *client = file->driver_priv;

	if (!rbln_client_drain_jobs_killable(client)) {
		rbln_client_close_drained(client);
		return;
	}
	drm_dev_get(drm);
	INIT_WORK(&client->close_work, rbln_client_close_work);
	rbln_jobs_queue_drain(&client->close_work);
}

bool rbln_client_revoked(struct rbln_client *client)
{
	bool revoked;

	mutex_lock(&client->rdev->clients_lock);
	revoked = client->revoked;
	mutex_unlock(&client->rdev->clients_lock);
	return revoked;
}

int rbln_client_check_owner(struct rbln_client *client)
{
	struct rbln_client *owner = READ_ONCE(client->rdev->owner);

	return owner && owner != client ? -EBUSY : 0;
}

int rbln_ioctl_acquire(struct drm_device *drm, void *data, struct drm_file *file)
{
	struct rbln_device *rdev = to_rbln_device(drm);
	struct rbln_client *client = file->driver_priv;
	struct drm_rbln_acquire *args = data;
	int ret = 0;

	if (args->flags || args->reserved)
		return -EINVAL;
	rbln_client_touch(client);
	mutex_lock(&rdev->clients_lock);
	if (client->revoked) {
		ret = -ENODEV;		/* revoked since the ioctl began */
	} else if (rdev->owner && rdev->owner != client) {
		ret = -EBUSY;
	} else if (!rdev->owner) {
		WRITE_ONCE(rdev->owner, client);
		rbln_client_event(client, RBLN_GENL_EVENT_ACQUIRED, 0);
	}
	mutex_unlock(&rdev->clients_lock);
	return ret;
}

int rbln_ioctl_release(struct drm_device *drm, void *data, struct drm_file *file)
{
	struct rbln_device *rdev = to_rbln_device(drm);
	struct rbln_client *client = file->driver_priv;
	struct drm_rbln_acquire *args = data;
	int ret = 0;

	if (args->flags || args->reserved)
		return -EINVAL;
	mutex_lock(&rdev->clients_lock);
	if (rdev->owner == client)
		rbln_client_drop_acquisition(client);
	else
		ret = -EINVAL;
	mutex_unlock(&rdev->clients_lock);
	return ret;
}

static bool rbln_client_stale(struct rbln_client *client)
{
	bool gone;

	rcu_read_lock();
	gone = !pid_task(client->creator, PIDTYPE_TGID);
	rcu_read_unlock();
	return gone;
}

static void rbln_client_describe(struct rbln_client *client, struct rbln_client *caller,
				 struct drm_rbln_client *out)
{
	u64 last, now;

	memset(out, 0, sizeof(*out));
	out->client_id = client->id;
	out->creator_pid = pid_vnr(client->creator);
	out->uid = from_kuid_munged(current_user_ns(), client->uid);
	out->flags = (client->rdev->owner == client ? DRM_RBLN_CLIENT_ACQUIRED : 0) |
		     (rbln_client_stale(client) ? DRM_RBLN_CLIENT_STALE : 0) |
		     (READ_ONCE(client->revoked) ? DRM_RBLN_CLIENT_REVOKED : 0) |
		     (client == caller ? DRM_RBLN_CLIENT_SELF : 0);
	out->device_memory = atomic64_read(&client->device_memory);
	last = atomic64_read(&client->last_active_ns);	/* first: "now" is not older */
	now = ktime_get_ns();
	out->idle_ns = now > last ? now - last : 0;
	strscpy(out->creator_comm, client->creator_comm, sizeof(out->creator_comm));
}

/* The entries @caller may see, at most @room of them; returns how many exist. */
u32 rbln_client_snapshot(struct rbln_device *rdev, struct rbln_client *caller,
			 struct drm_rbln_client *entries, u32 room)
{
	bool all = capable(CAP_SYS_ADMIN);
	struct rbln_client *client;
	u32 visible = 0;

	lockdep_assert_held(&rdev->clients_lock);
	list_for_each_entry(client, &rdev->clients, link) {
		if (!all && !uid_eq(client->uid, current_uid()))
			continue;
		if (visible < room)
			rbln_client_describe(client, caller, &entries[visible]);
		visible++;
	}
	return visible;
}

/*
 * The entries are gathered under clients_lock and copied out after it is
 * dropped: a page fault on the caller's buffer (userfaultfd, FUSE) must not
 * stall every open and close of the device.
 */
int rbln_ioctl_list_clients(struct drm_device *drm, void *data, struct drm_file *file)
{
	struct rbln_device *rdev = to_rbln_device(drm);
	struct drm_rbln_list_clients *args = data;
	char __user *uptr = u64_to_user_ptr(args->entries);
	struct drm_rbln_client *entries = NULL;
	u32 room = 0, visible, i;
	size_t tail;

	if (args->flags || args->reserved || args->entry_size < sizeof(*entries) ||
	    args->entry_size > RBLN_CLIENT_ENTRY_MAX)
		return -EINVAL;

	mutex_lock(&rdev->clients_lock);
	if (args->count) {
		room = min_t(u32, args->count, list_count_nodes(&rdev->clients));
		entries = kvcalloc(room, sizeof(*entries), GFP_KERNEL_ACCOUNT);
		if (!entries) {
			mutex_unlock(&rdev->clients_lock);
			return -ENOMEM;
		}
	}
	visible = rbln_client_snapshot(rdev, file->driver_priv, entries, room);
	mutex_unlock(&rdev->clients_lock);

	tail = args->entry_size - sizeof(*entries);
	for (i = 0; i < min(visible, room); i++) {
		char __user *slot = uptr + (size_t)i * args->entry_size;

		if (copy_to_user(slot, &entries[i], sizeof(*entries)) ||
		    clear_user(slot + sizeof(*entries), tail)) {
			kvfree(entries);
			return -EFAULT;
		}
	}
	kvfree(entries);
	args->count = visible;
	return 0;
}

/* Deletes every handle of @client's file; clients_lock held, the file not closing. */
static void rbln_client_delete_handles(struct rbln_client *client)
{
	struct drm_file *file = client->file;
	int handle = 0;

	lockdep_assert_held(&client->rdev->clients_lock);
	for (;;) {
		spin_lock(&file->table_lock);
		if (!idr_get_next(&file->object_idr, &handle))
			handle = -1;
		spin_unlock(&file->table_lock);
		if (handle < 0)
			break;
		drm_gem_handle_delete(file, handle++);
	}
}

/*
 * Revokes @victim, already marked revoked and its jobs drained: no
 * acquisition, no memory, no handles.  Its file may start closing meanwhile;
 * its handle table is only touched while the client is still listed, that
 * is, before the DRM core frees that table.  Returns the device memory freed.
 */
static u64 rbln_client_revoke_drained(struct rbln_client *victim)
{
	struct rbln_device *rdev = victim->rdev;
	u64 freed;

	freed = rbln_mem_revoke_client(rdev, victim->id);

	mutex_lock(&rdev->clients_lock);
	rbln_client_drop_acquisition(victim);
	if (!list_empty(&victim->link))
		rbln_client_delete_handles(victim);
	mutex_unlock(&rdev->clients_lock);
	return freed;
}

static void rbln_client_revoked_report(struct rbln_client *victim, u64 freed)
{
	rbln_client_event(victim, RBLN_GENL_EVENT_RECLAIMED, freed);
	drm_info(&victim->rdev->drm, "reclaimed client %llu of pid %d (%s): %llu bytes freed\n",
		 victim->id, pid_nr(victim->creator), victim->creator_comm, freed);
}

/* A revocation whose revoker was killed: finished here, with its reference. */
static void rbln_client_revoke_work(struct work_struct *work)
{
	struct rbln_client *victim = container_of(work, struct rbln_client, revoke_work);
	struct drm_device *drm = &victim->rdev->drm;

	rbln_client_drain_jobs(victim);
	rbln_client_revoked_report(victim, rbln_client_revoke_drained(victim));
	rbln_client_put(victim);
	drm_dev_put(drm);
}

static void rbln_client_revoke_later(struct rbln_client *victim)
{
	drm_dev_get(&victim->rdev->drm);
	INIT_WORK(&victim->revoke_work, rbln_client_revoke_work);
	rbln_jobs_queue_drain(&victim->revoke_work);
}

/*
 * Revokes @victim, whose reference the caller gives: 0 and the bytes freed,
 * or -EINTR when the caller was killed while its jobs drained; a work item
 * finishes the revocation then.
 */
static int rbln_client_revoke(struct rbln_client *victim, u64 *freed)
{
	if (rbln_client_drain_jobs_killable(victim)) {
		rbln_client_revoke_later(victim);
		return -EINTR;
	}
	*freed = rbln_client_revoke_drained(victim);
	rbln_client_revoked_report(victim, *freed);
	rbln_client_put(victim);
	return 0;
}

int rbln_ioctl_reclaim(struct drm_device *drm, void *data, struct drm_file *file)
{
	struct rbln_device *rdev = to_rbln_device(drm);
	struct rbln_client *caller = file->driver_priv, *victim = NULL, *client;
	struct drm_rbln_reclaim *args = data;
	bool force = args->flags & DRM_RBLN_RECLAIM_FORCE;
	bool admin = capable(CAP_SYS_ADMIN);
	int ret = 0, idx;

	if (args->flags & ~DRM_RBLN_RECLAIM_FORCE || args->reserved)
		return -EINVAL;
	if (force && !admin)
		return -EPERM;

	/* The choice is made on a present device; the drain is not removal's to wait for. */
	if (!drm_dev_enter(drm, &idx))
		return -ENODEV;
	mutex_lock(&rdev->clients_lock);
	list_for_each_entry(client, &rdev->clients, link)
		if (client->id == args->client_id &&
		    (admin || uid_eq(client->uid, current_uid()))) {
			victim = client;
			break;
		}
	if (!victim)
		ret = -ENOENT;	/* another user's clients are invisible to non-admins */
	else if (victim == caller)
		ret = -EINVAL;
	else if (READ_ONCE(victim->revoked))
		ret = -EALREADY;
	else if (!force && !rbln_client_stale(victim))
		ret = -EBUSY;
	if (!ret) {
		WRITE_ONCE(victim->revoked, true);	/* one revocation per client */
		kref_get(&victim->ref);		/* it may close while we revoke */
	}
	mutex_unlock(&rdev->clients_lock);
	drm_dev_exit(idx);
	if (ret)
		return ret;

	rbln_test_point(RBLN_TP_RECLAIM_CHOSEN);
	return rbln_client_revoke(victim, &args->freed_bytes);
}

int rbln_ioctl_reset(struct drm_device *drm, void *data, struct drm_file *file)
{
	struct rbln_device *rdev = to_rbln_device(drm);
	struct rbln_client *caller = file->driver_priv, *client, **victims = NULL;
	struct drm_rbln_reset *args = data;
	unsigned int n = 0, i;
	int idx, ret;

	if (args->flags & ~DRM_RBLN_RESET_FORCE || args->revoked)
		return -EINVAL;
	if (!capable(CAP_SYS_ADMIN))
		return -EPERM;

	/* As RECLAIM: inside the device to choose and to reset, not to drain. */
	if (!drm_dev_enter(drm, &idx))
		return -ENODEV;
	mutex_lock(&rdev->clients_lock);
	list_for_each_entry(client, &rdev->clients, link)
		if (client != caller && !READ_ONCE(client->revoked))
			n++;
	if (n && !(args->flags & DRM_RBLN_RESET_FORCE)) {
		mutex_unlock(&rdev->clients_lock);
		drm_dev_exit(idx);
		return -EBUSY;
	}
	if (n) {
		victims = kcalloc(n, sizeof(*victims), GFP_KERNEL_ACCOUNT);
		if (!victims) {
			mutex_unlock(&rdev->clients_lock);
			drm_dev_exit(idx);
			return -ENOMEM;
		}
		i = 0;
		list_for_each_entry(client, &rdev->clients, link)
			if (client != caller && !READ_ONCE(client->revoked)) {
				WRITE_ONCE(client->revoked, true);
				kref_get(&client->ref);
				victims[i++] = client;
			}
	}
	mutex_unlock(&rdev->clients_lock);
	drm_dev_exit(idx);

	for (i = 0; i < n; i++) {
		u64 freed;

		if (rbln_client_revoke(victims[i], &freed)) {
			/* Killed: the others are revoked later too, the device not reset. */
			while (++i < n)
				rbln_client_revoke_later(victims[i]);
			kfree(victims);
			return -EINTR;
		}
	}
	kfree(victims);
	rbln_test_point(RBLN_TP_RESET_RECOVERING);
	if (!drm_dev_enter(drm, &idx))
		return -ENODEV;
	ret = rbln_device_recover(rdev);
	drm_dev_exit(idx);
	if (ret) {
		drm_err(drm, "reset failed (%d): the device stays wedged\n", ret);
		return ret;
	}
	args->revoked = n;
	drm_info(drm, "reset (%u open file(s) revoked)\n", n);
	rbln_event_send(&(struct rbln_event){ .type = RBLN_GENL_EVENT_RESET,
					      .device = rdev->info.index });
	return 0;
}
