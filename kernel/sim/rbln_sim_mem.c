// SPDX-License-Identifier: GPL-2.0-only
/*
 * Simulated memory: the device memory of a buffer (and host memory for
 * External HDMA) is vmalloc'ed kernel memory, charged to the memory cgroup of
 * the process that places it.  A host short of memory is an ENOMEM for the
 * caller, not a warning in the kernel log.  CPU mappings are filled page by
 * page by the core's fault handler, so no VM_USERMAP area is needed.
 */
#include <linux/mm.h>
#include <linux/vmalloc.h>

#include "rbln_sim.h"

void *rbln_sim_mem_alloc(struct rbln_device *rdev, u32 chiplet, u64 address, size_t size)
{
	return __vmalloc(size, GFP_KERNEL_ACCOUNT | __GFP_ZERO | __GFP_NOWARN);
}

void rbln_sim_mem_free(struct rbln_device *rdev, void *vaddr)
{
	vfree(vaddr);
}

struct page *rbln_sim_mem_page(struct rbln_device *rdev, void *vaddr, size_t offset)
{
	return vmalloc_to_page(vaddr + offset);
}
