// SPDX-License-Identifier: GPL-2.0-only
/*
 * A dependency's error (rbln_sync.c): a timeline point's chain node and a
 * merged sync_file's fence array carry none of their own, or not yet; the
 * error is found in the fences inside.
 */
#include <kunit/test.h>
#include <linux/dma-fence-array.h>
#include <linux/dma-fence-chain.h>
#include <linux/slab.h>

#include "../rbln_job.h"
#include "../rbln_sync.h"

static struct dma_fence *failed(struct kunit *test, int error)
{
	struct dma_fence *f = rbln_fence_create_failed(error);

	KUNIT_ASSERT_NOT_NULL(test, f);
	return f;
}

/* A timeline point whose fence failed: the chain node signals without an error. */
static void rbln_sync_timeline_point_has_its_fences_error(struct kunit *test)
{
	struct dma_fence_chain *first = dma_fence_chain_alloc(), *second = dma_fence_chain_alloc();

	KUNIT_ASSERT_TRUE(test, first && second);
	dma_fence_chain_init(first, NULL, failed(test, -EIO), 1);
	dma_fence_chain_init(second, dma_fence_get(&first->base), dma_fence_get_stub(), 2);
	KUNIT_EXPECT_EQ(test, rbln_fence_error(&first->base), -EIO);
	/* A later point that succeeded is not failed by an earlier one. */
	KUNIT_EXPECT_EQ(test, rbln_fence_error(&second->base), 0);
	dma_fence_put(&second->base);
	dma_fence_put(&first->base);
}

/* A merged fence whose signalling nobody enabled has no error yet; one inside it has. */
static void rbln_sync_merged_fence_has_its_first_error(struct kunit *test)
{
	struct dma_fence **fences = kcalloc(2, sizeof(*fences), GFP_KERNEL);
	struct dma_fence_array *array;

	KUNIT_ASSERT_NOT_NULL(test, fences);
	fences[0] = dma_fence_get_stub();
	fences[1] = failed(test, -ETIMEDOUT);
	array = dma_fence_array_create(2, fences, dma_fence_context_alloc(1), 1, false);
	KUNIT_ASSERT_NOT_NULL(test, array);
	KUNIT_EXPECT_GE(test, array->base.error, 0);	/* none of its own, maybe "pending" */
	KUNIT_EXPECT_EQ(test, rbln_fence_error(&array->base), -ETIMEDOUT);
	dma_fence_put(&array->base);
}

static void rbln_sync_plain_fence_has_its_own_error(struct kunit *test)
{
	struct dma_fence *f = failed(test, -ECANCELED), *ok = dma_fence_get_stub();

	KUNIT_EXPECT_EQ(test, rbln_fence_error(f), -ECANCELED);
	KUNIT_EXPECT_EQ(test, rbln_fence_error(ok), 0);
	dma_fence_put(ok);
	dma_fence_put(f);
}

static struct kunit_case rbln_sync_cases[] = {
	KUNIT_CASE(rbln_sync_timeline_point_has_its_fences_error),
	KUNIT_CASE(rbln_sync_merged_fence_has_its_first_error),
	KUNIT_CASE(rbln_sync_plain_fence_has_its_own_error),
	{}
};

static struct kunit_suite rbln_sync_suite = {
	.name = "rbln_sync",
	.test_cases = rbln_sync_cases,
};
kunit_test_suite(rbln_sync_suite);
