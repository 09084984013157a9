// SPDX-License-Identifier: GPL-2.0-only
/* Compiles iff VMA flags are changed through vm_flags_set(). */
#include <linux/mm.h>

void rbln_probe(struct vm_area_struct *vma);
void rbln_probe(struct vm_area_struct *vma)
{
	vm_flags_set(vma, VM_DONTEXPAND);
}
