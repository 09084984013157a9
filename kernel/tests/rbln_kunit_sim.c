// SPDX-License-Identifier: GPL-2.0-only
/* Simulated devices for the KUnit suites; see rbln_kunit_sim.h. */
#include <kunit/resource.h>
#include <linux/atomic.h>

#include "../sim/rbln_sim.h"
#include "rbln_kunit_sim.h"

/* Test devices take ids from the top of the range, clear of sim_devices=. */
#define RBLN_TEST_FIRST_ID	200
#define RBLN_TEST_IDS		50

static atomic_t rbln_test_next_id = ATOMIC_INIT(0);

static void rbln_test_del_action(void *id)
{
	rbln_sim_del_device((uintptr_t)id);
}

struct rbln_device *rbln_test_device(struct kunit *test, const char *sku_and_mib)
{
	unsigned int id = RBLN_TEST_FIRST_ID +
			  atomic_inc_return(&rbln_test_next_id) % RBLN_TEST_IDS;
	struct rbln_device *rdev;
	char spec[64];

	snprintf(spec, sizeof(spec), "%u %s", id, sku_and_mib);
	KUNIT_ASSERT_EQ_MSG(test, rbln_sim_new_device(spec), 0, "new_device \"%s\"", spec);
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, rbln_test_del_action,
							(void *)(uintptr_t)id), 0);
	rdev = rbln_sim_find_device(id);
	KUNIT_ASSERT_NOT_NULL(test, rdev);
	/* Held to the end of the test, so rdev stays readable after a removal. */
	rbln_test_hold_device(test, rdev);
	return rdev;
}

void rbln_test_remove_device(struct kunit *test, struct rbln_device *rdev)
{
	kunit_release_action(test, rbln_test_del_action, (void *)(uintptr_t)rdev->info.index);
}
