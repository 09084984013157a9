/* A program linked against librbln_devmgr.so.0 through its C ABI, as an
 * application in a container would be: lists the NPUs the library finds and
 * opens each one it has a node for.  Built without an RPATH, so inside a
 * container it finds the library through the loader cache only. */
#include <stdio.h>

#include <rbln/devmgr.h>

int main(void)
{
	size_t count = 0;
	if (rbln_npu_count(&count) != RBLN_OK) {
		fprintf(stderr, "devmgr_probe: %s\n", rbln_last_error());
		return 1;
	}
	for (size_t i = 0; i < count; i++) {
		rbln_npu_info info = {.struct_size = sizeof(info)};
		rbln_device *dev = NULL;
		if (rbln_npu_get(i, &info) != RBLN_OK || !info.node_present)
			continue;
		if (rbln_device_open(info.index, &dev) != RBLN_OK) {
			fprintf(stderr, "devmgr_probe: %s\n", rbln_last_error());
			return 1;
		}
		printf("devmgr: NPU %u %s opened\n", info.index, info.uuid);
		rbln_device_close(dev);
	}
	return 0;
}
