// SPDX-License-Identifier: GPL-2.0-only
/* The product table (rbln_sku.c). */
#include <kunit/test.h>
#include <linux/sizes.h>

#include "../rbln_hw.h"
#include "../rbln_sku.h"

static void rbln_sku_by_key_and_name(struct kunit *test)
{
	const struct rbln_sku *sku;

	sku = rbln_sku_by_key("rebel100");
	KUNIT_ASSERT_NOT_NULL(test, sku);
	KUNIT_EXPECT_EQ(test, sku->id, DRM_RBLN_SKU_REBEL100);
	KUNIT_EXPECT_EQ(test, sku->chiplets, 4U);
	KUNIT_EXPECT_PTR_EQ(test, rbln_sku_by_key("RBLN-CR03"), sku);
	/* sysfs writes end in a newline. */
	KUNIT_EXPECT_PTR_EQ(test, rbln_sku_by_key("rebel100\n"), sku);
	KUNIT_EXPECT_EQ(test, rbln_sku_by_key("atom")->id, DRM_RBLN_SKU_ATOM);
	KUNIT_EXPECT_EQ(test, rbln_sku_by_key("atom-max")->id, DRM_RBLN_SKU_ATOM_MAX);
	KUNIT_EXPECT_STREQ(test, rbln_sku_by_key("RBLN-CA25")->key, "atom-max");
}

static void rbln_sku_unknown(struct kunit *test)
{
	KUNIT_EXPECT_NULL(test, rbln_sku_by_key(""));
	KUNIT_EXPECT_NULL(test, rbln_sku_by_key("rebel"));
	KUNIT_EXPECT_NULL(test, rbln_sku_by_key("atom-max-x"));
	KUNIT_EXPECT_NULL(test, rbln_sku_by_id(DRM_RBLN_SKU_UNKNOWN));
	KUNIT_EXPECT_NULL(test, rbln_sku_by_id(99));
}

/* Every product can be simulated: chiplets fit, memory splits into whole pages. */
static void rbln_sku_table_consistent(struct kunit *test)
{
	static const enum drm_rbln_sku ids[] = {
		DRM_RBLN_SKU_ATOM, DRM_RBLN_SKU_ATOM_MAX, DRM_RBLN_SKU_REBEL100,
	};
	unsigned int i;

	for (i = 0; i < ARRAY_SIZE(ids); i++) {
		const struct rbln_sku *sku = rbln_sku_by_id(ids[i]);

		KUNIT_ASSERT_NOT_NULL(test, sku);
		KUNIT_EXPECT_PTR_EQ(test, rbln_sku_by_key(sku->key), sku);
		KUNIT_EXPECT_PTR_EQ(test, rbln_sku_by_key(sku->name), sku);
		KUNIT_EXPECT_GE(test, sku->chiplets, 1U);
		KUNIT_EXPECT_LE(test, sku->chiplets, (u32)RBLN_MAX_CHIPLETS);
		KUNIT_EXPECT_EQ(test, sku->memory % ((u64)sku->chiplets * PAGE_SIZE), 0ULL);
		KUNIT_EXPECT_LT(test, sku->idle_power_mw, sku->max_power_mw);
		KUNIT_EXPECT_NOT_NULL(test, strstr(rbln_sku_keys(), sku->key));
	}
	/* What rbln-smi shows: 15.7 GiB on ATOM, 140 GiB on Rebel100. */
	KUNIT_EXPECT_EQ(test, rbln_sku_by_id(DRM_RBLN_SKU_ATOM)->memory, 16076ULL * SZ_1M);
	KUNIT_EXPECT_EQ(test, rbln_sku_by_id(DRM_RBLN_SKU_REBEL100)->memory, 140ULL * SZ_1G);
	/* The PCI backend's board exists, but the simulator cannot make one. */
	KUNIT_ASSERT_NOT_NULL(test, rbln_sku_by_id(DRM_RBLN_SKU_EDU));
	KUNIT_EXPECT_TRUE(test, rbln_sku_by_id(DRM_RBLN_SKU_EDU)->pci_only);
	KUNIT_EXPECT_NULL(test, rbln_sku_by_key("edu"));
	KUNIT_EXPECT_NULL(test, rbln_sku_by_key(rbln_sku_by_id(DRM_RBLN_SKU_EDU)->name));
}

static struct kunit_case rbln_sku_cases[] = {
	KUNIT_CASE(rbln_sku_by_key_and_name),
	KUNIT_CASE(rbln_sku_unknown),
	KUNIT_CASE(rbln_sku_table_consistent),
	{}
};

static struct kunit_suite rbln_sku_suite = {
	.name = "rbln_sku",
	.test_cases = rbln_sku_cases,
};
kunit_test_suite(rbln_sku_suite);
