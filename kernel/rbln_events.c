// SPDX-License-Identifier: GPL-2.0-only
/*
 * Driver events, multicast on generic netlink so that a management daemon,
 * rbln-smi or a runtime can follow devices coming and going, acquisitions,
 * reclaims, engine resets and faults without polling.
 */
#include <net/genetlink.h>
#include <drm/drm_print.h>
#include <drm/rbln_drm.h>

#include "rbln_compat.h"
#include "rbln_device.h"
#include "rbln_events.h"

/*
 * Events name processes and clients of every user, which LIST_CLIENTS shows
 * only to CAP_SYS_ADMIN: only such sockets may join.  Where the kernel cannot
 * restrict the group, events carry no process or client at all.
 */
static const struct genl_multicast_group rbln_genl_mcgrps[] = {
	{ .name = RBLN_GENL_MCGRP_EVENTS, .flags = RBLN_GENL_MCAST_ADMIN_ONLY },
};

static struct genl_family rbln_genl_family = {
	.name = RBLN_GENL_NAME,
	.version = RBLN_GENL_VERSION,
	.maxattr = RBLN_GENL_ATTR_MAX,
	.module = THIS_MODULE,
	.mcgrps = rbln_genl_mcgrps,
	.n_mcgrps = ARRAY_SIZE(rbln_genl_mcgrps),
	.resv_start_op = RBLN_GENL_CMD_EVENT + 1,
};

static int rbln_event_fill(struct sk_buff *skb, const struct rbln_event *ev)
{
	if (nla_put_u32(skb, RBLN_GENL_ATTR_EVENT, ev->type) ||
	    nla_put_u32(skb, RBLN_GENL_ATTR_DEVICE, ev->device))
		return -EMSGSIZE;
	if (ev->has & RBLN_EV_CHIPLET && nla_put_u32(skb, RBLN_GENL_ATTR_CHIPLET, ev->chiplet))
		return -EMSGSIZE;
	if (ev->has & RBLN_EV_ENGINE && nla_put_u32(skb, RBLN_GENL_ATTR_ENGINE, ev->engine))
		return -EMSGSIZE;
	if (ev->has & RBLN_EV_CLIENT && RBLN_GENL_MCAST_ADMIN_ONLY &&
	    (nla_put_u32(skb, RBLN_GENL_ATTR_PID, ev->pid) ||
	     nla_put_u64_64bit(skb, RBLN_GENL_ATTR_CLIENT, ev->client, RBLN_GENL_ATTR_PAD)))
		return -EMSGSIZE;
	if (ev->has & RBLN_EV_BYTES &&
	    nla_put_u64_64bit(skb, RBLN_GENL_ATTR_BYTES, ev->bytes, RBLN_GENL_ATTR_PAD))
		return -EMSGSIZE;
	return 0;
}

void rbln_event_send(const struct rbln_event *ev)
{
	struct sk_buff *skb;
	void *hdr;

	skb = genlmsg_new(NLMSG_GOODSIZE, GFP_KERNEL);
	if (!skb)
		return;
	hdr = genlmsg_put(skb, 0, 0, &rbln_genl_family, 0, RBLN_GENL_CMD_EVENT);
	if (!hdr || rbln_event_fill(skb, ev)) {
		nlmsg_free(skb);
		return;
	}
	genlmsg_end(skb, hdr);
	genlmsg_multicast(&rbln_genl_family, skb, 0, 0, GFP_KERNEL);
}

int rbln_events_init(void)
{
	return genl_register_family(&rbln_genl_family);
}

void rbln_events_fini(void)
{
	genl_unregister_family(&rbln_genl_family);
}
