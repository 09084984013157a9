/* SPDX-License-Identifier: GPL-2.0-only */
/* The suites' simulated devices (made with the simulator, so built only with it). */
#ifndef RBLN_KUNIT_SIM_H
#define RBLN_KUNIT_SIM_H

#include "../sim/rbln_sim.h"
#include "rbln_kunit.h"

/* The simulator behind a test device, for its fault-injection state. */
static inline struct rbln_sim_device *rbln_test_sim(struct rbln_device *rdev)
{
	return rbln_device_hw_priv(rdev);
}

/* A simulated device ("SKU [MEMORY_MIB]"), removed when the test ends. */
struct rbln_device *rbln_test_device(struct kunit *test, const char *sku_and_mib);
/* Removes it now (hot-unplug with files possibly still open). */
void rbln_test_remove_device(struct kunit *test, struct rbln_device *rdev);

#endif /* RBLN_KUNIT_SIM_H */
