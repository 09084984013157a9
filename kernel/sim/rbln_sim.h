/* SPDX-License-Identifier: GPL-2.0-only */
/* The simulation backend: NPUs without silicon, in the spirit of netdevsim. */
#ifndef RBLN_SIM_H
#define RBLN_SIM_H

#include <linux/device.h>
#include <linux/list.h>

struct rbln_device;
struct rbln_hw_info;
struct rbln_sku;

struct rbln_sim_device {
	struct device dev;		/* /sys/bus/rbln_sim/devices/rbln_simN */
	struct list_head list;
	unsigned int id;
	const struct rbln_sku *sku;
	u64 memory;			/* bytes */
	struct rbln_device *rdev;	/* while bound to the driver */
};

/* A request to create a device: what new_device is given, parsed. */
struct rbln_sim_spec {
	unsigned int id;
	const struct rbln_sku *sku;
	u64 memory;			/* bytes */
};

int rbln_sim_init(void);

/* What /sys/bus/rbln_sim/{new,del}_device do; also the KUnit tests' way in. */
int rbln_sim_parse_spec(const char *buf, unsigned int default_mib, struct rbln_sim_spec *spec);
int rbln_sim_new_device(const char *buf);
int rbln_sim_del_device(unsigned int id);
/* The core device of simulated device @id, referenced (drm_dev_put()), or NULL. */
struct rbln_device *rbln_sim_find_device(unsigned int id);
void rbln_sim_exit(void);

/* rbln_sim_hw.c: the simulated hardware behind struct rbln_hw_ops. */
extern const struct rbln_hw_ops rbln_sim_hw_ops;
void rbln_sim_fill_info(const struct rbln_sim_device *sdev, struct rbln_hw_info *info);

#endif /* RBLN_SIM_H */
