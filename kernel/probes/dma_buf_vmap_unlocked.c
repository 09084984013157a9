// SPDX-License-Identifier: GPL-2.0-only
/* Compiles iff dma_buf_vmap() expects the reservation lock held and
 * dma_buf_vmap_unlocked() is the call for importers that do not hold it. */
#include <linux/dma-buf.h>
#include <linux/iosys-map.h>

int rbln_probe(struct dma_buf *buf, struct iosys_map *map);
int rbln_probe(struct dma_buf *buf, struct iosys_map *map)
{
	int ret = dma_buf_vmap_unlocked(buf, map);

	if (!ret)
		dma_buf_vunmap_unlocked(buf, map);
	return ret;
}
