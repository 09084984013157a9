/* SPDX-License-Identifier: GPL-2.0-only */
/* Driver events on the "rbln" generic netlink family (see rbln_drm.h). */
#ifndef RBLN_EVENTS_H
#define RBLN_EVENTS_H

#include <linux/bits.h>
#include <linux/types.h>

/* struct rbln_event.has: the optional attributes that are set. */
#define RBLN_EV_CHIPLET		BIT(0)
#define RBLN_EV_ENGINE		BIT(1)
#define RBLN_EV_CLIENT		BIT(2)	/* client and pid */
#define RBLN_EV_BYTES		BIT(3)

struct rbln_event {
	u32 type;		/* enum rbln_genl_event */
	u32 device;		/* NPU index */
	u32 has;		/* RBLN_EV_* */
	u32 chiplet;
	u32 engine;
	u32 pid;
	u64 client;
	u64 bytes;
};

int rbln_events_init(void);
void rbln_events_fini(void);
/* Best effort: nobody listening is not an error. */
void rbln_event_send(const struct rbln_event *ev);

#endif /* RBLN_EVENTS_H */
