// SPDX-License-Identifier: GPL-2.0-only
/* Compiles iff MODULE_IMPORT_NS() takes the namespace as a bare identifier;
 * newer kernels take a string literal, where DMA_BUF here is undeclared. */
#define KBUILD_MODNAME "rbln_probe"
#include <linux/module.h>

MODULE_IMPORT_NS(DMA_BUF);
