#!/bin/bash
# check-hw-boundary.sh on copies of kernel/ with one boundary break each (the
# kinds an audit slipped past the first check): every one must fail, the clean
# copy must pass, and so must a tree that is missing or empty fail.
set -u
here=$(cd "$(dirname "$0")" && pwd)
check=$here/check-hw-boundary.sh
src=$(cd "$here/../../kernel" && pwd)
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
# shellcheck source=tests/unit/verdict-cases.sh
. "$here/verdict-cases.sh"

verdict() {	# want name tree
	judge "$1" "$2" "$check" "$3"
}

breaks() {	# name, file under kernel/, line to add
	rm -rf "$dir/k" && cp -r "$src" "$dir/k"
	mkdir -p "$(dirname "$dir/k/$2")"
	echo "$3" >> "$dir/k/$2"
	verdict fail "$1" "$dir/k"
}

rm -rf "$dir/k" && cp -r "$src" "$dir/k"
verdict pass "the tree as it is" "$dir/k"
verdict fail "a missing tree" "$dir/absent"
mkdir "$dir/empty"
verdict fail "a tree without files" "$dir/empty"
breaks "kvzalloc" rbln_gem.c 'static void *f(size_t n) { return kvzalloc(n, GFP_KERNEL); }'
breaks "vmap" rbln_gem.c 'static void *f(struct page **p, int n) { return vmap(p, n, 0, PAGE_KERNEL); }'
breaks "alloc_pages" rbln_mem.c 'static struct page *f(void) { return alloc_pages(GFP_KERNEL, 0); }'
breaks "memset of a buffer" rbln_job.c 'static void f(void *vaddr, size_t size) { memset(vaddr, 0, size); }'
breaks "copy_page" rbln_job.c 'static void f(void *a, void *b) { copy_page(a, b); }'
breaks "__builtin_memcpy" rbln_job.c 'static void f(void *a, void *b, size_t n) { __builtin_memcpy(a, b, n); }'
breaks "a simulator type" rbln_device.h 'struct rbln_sim_device *sim_of(struct rbln_device *rdev);'
breaks "the simulator's header" rbln_drv.c '#include "sim/rbln_sim.h"'
breaks "a simulator function" rbln_drv.c 'static void f(void) { rbln_sim_find_device(0); }'
breaks "an op called past the wrappers" rbln_sched.c 'static void f(struct rbln_device *rdev) { rdev->hw->device_reset(rdev); }'
breaks "an op through a saved ops pointer" rbln_job.c 'static void f(struct rbln_engine *e) { e->chiplet->rdev->hw->device_reset(NULL); }'
breaks "a backend including the core's device" sim/rbln_sim_mem.c '#include "../rbln_device.h"'
breaks "a backend including the core's buffers" sim/rbln_sim_engine.c '#include "../rbln_gem.h"'
breaks "a backend reading the chiplets" sim/rbln_sim_debugfs.c 'static int f(struct rbln_device *rdev) { return rdev->nr_chiplets; }'
breaks "a backend reading a buffer's vaddr" sim/rbln_sim_engine.c 'static void *f(struct rbln_bo *bo) { return bo->vaddr; }'
breaks "a PCI backend reading the core's info" pci/rbln_pci.c 'static u32 f(struct rbln_device *rdev) { return rdev->info.index; }'
breaks "the KUnit fake backend including the core's device" tests/rbln_fake_hw.c '#include "../rbln_device.h"'
breaks "the KUnit fake backend reading the chiplets" tests/rbln_fake_hw.c 'static int f(struct rbln_device *rdev) { return rdev->nr_chiplets; }'
breaks "memcpy in a core file below kernel/" include/uapi/drm/x.h 'static inline void f(void *a, void *b) { memcpy(a, b, 8); }'
judged check-hw-boundary
