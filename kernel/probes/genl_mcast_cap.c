// SPDX-License-Identifier: GPL-2.0-only
/* Compiles iff generic netlink multicast groups can require a capability
 * of the sockets that join them. */
#include <net/genetlink.h>

static const struct genl_multicast_group rbln_probe_groups[] __maybe_unused = {
	{ .name = "probe", .flags = GENL_MCAST_CAP_SYS_ADMIN },
};
