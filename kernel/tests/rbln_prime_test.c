// SPDX-License-Identifier: GPL-2.0-only
/*
 * PRIME between two devices: the importer reaches the exporter's bytes through
 * the dma-buf's kernel mapping, never through the struct pages of its
 * sg_table (which CONFIG_DMABUF_DEBUG, set in this kernel, scrambles).
 */
#include <kunit/test.h>
#include <linux/dma-buf.h>
#include <linux/sizes.h>
#include <linux/string.h>
#include <drm/drm_prime.h>

#include "rbln_kunit_sim.h"

/* Imports @obj of one device into @file of another, as PRIME_FD_TO_HANDLE does. */
static u32 import(struct kunit *test, struct rbln_device *into, struct file *file,
		  struct drm_gem_object *obj)
{
	struct drm_gem_object *imported;
	struct dma_buf *buf;
	u32 handle;

	buf = drm_gem_prime_export(obj, O_RDWR);
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, buf);
	imported = drm_gem_prime_import(&into->drm, buf);
	dma_buf_put(buf);		/* the import holds the buffer now */
	KUNIT_ASSERT_NOT_ERR_OR_NULL(test, imported);
	KUNIT_EXPECT_TRUE(test, to_rbln_bo(imported)->flags & DRM_RBLN_BO_HOST);
	KUNIT_ASSERT_EQ(test, drm_gem_handle_create(file->private_data, imported, &handle), 0);
	drm_gem_object_put(imported);
	return handle;
}

/* Runs one External HDMA copy of @size bytes on chiplet 0 and waits for it. */
static int copy(struct kunit *test, struct file *file, u32 src, u32 dst, u64 size)
{
	struct drm_rbln_copy c = { .src_handle = src, .dst_handle = dst, .size = size };
	struct drm_rbln_submit s = {
		.engine = DRM_RBLN_ENGINE_EXTERNAL_HDMA, .copy_count = 1, .copy_size = sizeof(c),
		.copies = (u64)(uintptr_t)rbln_test_user_copy(test, &c, sizeof(c)),
	};
	struct drm_rbln_wait w = { .timeout_ns = 5LL * NSEC_PER_SEC };
	int ret = rbln_test_ioctl(test, file, DRM_IOCTL_RBLN_SUBMIT, &s);

	if (ret)
		return ret;
	w.seqno = s.seqno;
	ret = rbln_test_ioctl(test, file, DRM_IOCTL_RBLN_WAIT, &w);
	return ret ?: w.status;
}

static void rbln_prime_import_moves_the_exporters_bytes(struct kunit *test)
{
	struct rbln_device *a = rbln_test_device(test, "atom 16");
	struct rbln_device *b = rbln_test_device(test, "atom 16");
	struct file *fa = rbln_test_open(test, a), *fb = rbln_test_open(test, b);
	struct rbln_bo *src = rbln_test_lookup(test, fa, rbln_test_bo(test, fa, SZ_64K, 0,
								 DRM_RBLN_BO_HOST));
	u32 imported = import(test, b, fb, &src->base);
	u32 dev = rbln_test_bo(test, fb, SZ_64K, 0, 0);
	struct rbln_bo *dev_bo = rbln_test_lookup(test, fb, dev);

	memset(src->vaddr, 0x5a, SZ_64K);
	KUNIT_ASSERT_EQ(test, copy(test, fb, imported, dev, SZ_64K), 0);
	KUNIT_EXPECT_NULL(test, memchr_inv(dev_bo->vaddr, 0x5a, SZ_64K));

	/* And back: device B writes into device A's buffer. */
	memset(dev_bo->vaddr, 0xc3, SZ_64K);
	KUNIT_ASSERT_EQ(test, copy(test, fb, dev, imported, SZ_64K), 0);
	KUNIT_EXPECT_NULL(test, memchr_inv(src->vaddr, 0xc3, SZ_64K));
}

static struct kunit_case rbln_prime_cases[] = {
	KUNIT_CASE(rbln_prime_import_moves_the_exporters_bytes),
	{}
};

static struct kunit_suite rbln_prime_suite = {
	.name = "rbln_prime",
	.test_cases = rbln_prime_cases,
};
kunit_test_suite(rbln_prime_suite);
