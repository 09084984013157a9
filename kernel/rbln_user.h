/* SPDX-License-Identifier: GPL-2.0-only */
/* What one user's buffers hold, over all its files and exports and every device. */
#ifndef RBLN_USER_H
#define RBLN_USER_H

#include <linux/types.h>
#include <linux/uidgid.h>

struct cred;
struct rbln_user;

/*
 * Who answers for what @cred's task makes: its uid, or inside a user
 * namespace the initial namespace's uid that created the outermost one
 * (short of root: in root's namespaces each uid is its own user).
 */
kuid_t rbln_user_accountable(const struct cred *cred);

/*
 * Charges a buffer of @size bytes to @uid until rbln_user_uncharge(): the
 * user, or an errno refusing it (-EMFILE: user_max_buffers; -EDQUOT:
 * user_max_bytes; -ENOMEM).
 */
struct rbln_user *rbln_user_charge(kuid_t uid, u64 size);
void rbln_user_uncharge(struct rbln_user *user, u64 size);

#endif /* RBLN_USER_H */
