// SPDX-License-Identifier: GPL-2.0-only
/* Compiles iff bus attribute callbacks take a const struct bus_type. */
#include <linux/device.h>

static ssize_t rbln_probe_store(const struct bus_type *bus, const char *buf, size_t n)
{
	return n;
}

static struct bus_attribute rbln_probe_attr __maybe_unused = {
	.store = rbln_probe_store,
};
