// SPDX-License-Identifier: GPL-2.0-only
/*
 * Per-user limits.  A file's limits (rbln_gem.c) are dodged by opening more
 * files, or by exporting buffers and closing the file: a dma-buf keeps its
 * buffer, and the buffer's range of the device's mmap offsets, alive with no
 * handle.  So every buffer made by BO_CREATE is also charged to the user who
 * made it, from its creation until it is freed, whoever holds it by then.
 * Imported buffers of other devices are their exporter's to count.
 *
 * One table for the module: a user's buffers on every rbln device count
 * together.  Entries live while a buffer of theirs does.
 *
 * A user is a uid of the initial user namespace.  Inside a user namespace
 * every uid it maps, however many (newuidmap grants whole /etc/subuid
 * ranges), is its creator's: charged to the owner of the outermost
 * namespace, as the kernel's own per-user counts (ucounts) charge a
 * namespace's use to its owner, so no namespace multiplies the limits.
 * The walk stops below a namespace root made: the uids of a container
 * runtime's namespaces are the administrator's to give, each a user.
 */
#include <linux/err.h>
#include <linux/minmax.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/sizes.h>
#include <linux/cred.h>
#include <linux/slab.h>
#include <linux/user_namespace.h>
#include <linux/xarray.h>

#include "rbln_user.h"

static unsigned int user_max_buffers = 262144;
module_param(user_max_buffers, uint, 0644);
MODULE_PARM_DESC(user_max_buffers,
	"Buffers one user may have made and not yet freed, on all rbln devices, exported ones included; more fail with EMFILE (default 262144)");

static unsigned long user_max_bytes = 256 * (unsigned long)SZ_1G;
module_param(user_max_bytes, ulong, 0644);
MODULE_PARM_DESC(user_max_bytes,
	"Bytes of such buffers, device and host memory, one user may hold; more fail with EDQUOT (default 256 GiB, a quarter of a device's mmap offsets)");

struct rbln_user {
	kuid_t uid;
	unsigned int buffers;		/* rbln_users_lock */
	u64 bytes;
};

static DEFINE_MUTEX(rbln_users_lock);
static DEFINE_XARRAY(rbln_users);	/* uid -> struct rbln_user */

kuid_t rbln_user_accountable(const struct cred *cred)
{
	const struct user_namespace *ns = cred->user_ns;
	kuid_t uid = cred->uid;

	for (; ns != &init_user_ns; ns = ns->parent) {
		/*
		 * Root's namespaces (a container runtime's) map uids the
		 * administrator handed out: each is a user of its own, or all
		 * containers would share root's one limit.
		 */
		if (uid_eq(ns->owner, GLOBAL_ROOT_UID))
			break;
		uid = ns->owner;
	}
	return uid;
}

struct rbln_user *rbln_user_charge(kuid_t uid, u64 size)
{
	unsigned long key = __kuid_val(uid);
	struct rbln_user *user;
	int ret = 0;

	mutex_lock(&rbln_users_lock);
	user = xa_load(&rbln_users, key);
	if (!user) {
		/* Bookkeeping a user causes is charged to its memory cgroup. */
		user = kzalloc(sizeof(*user), GFP_KERNEL_ACCOUNT);
		if (!user) {
			ret = -ENOMEM;
			goto out;
		}
		user->uid = uid;
		ret = xa_err(xa_store(&rbln_users, key, user, GFP_KERNEL_ACCOUNT));
		if (ret) {
			kfree(user);
			goto out;
		}
	}
	if (user->buffers >= READ_ONCE(user_max_buffers))
		ret = -EMFILE;
	else if (size > READ_ONCE(user_max_bytes) - min_t(u64, user->bytes, READ_ONCE(user_max_bytes)))
		ret = -EDQUOT;
	if (!ret) {
		user->buffers++;
		user->bytes += size;
	} else if (!user->buffers) {
		xa_erase(&rbln_users, key);
		kfree(user);
	}
out:
	mutex_unlock(&rbln_users_lock);
	return ret ? ERR_PTR(ret) : user;
}

void rbln_user_uncharge(struct rbln_user *user, u64 size)
{
	mutex_lock(&rbln_users_lock);
	user->bytes -= size;
	if (!--user->buffers) {
		xa_erase(&rbln_users, __kuid_val(user->uid));
		kfree(user);
	}
	mutex_unlock(&rbln_users_lock);
}
