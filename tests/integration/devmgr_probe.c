/* A program linked against librbln_devmgr.so.0 through its C ABI, as an
 * application in a container would be: lists the NPUs the library finds,
 * opens each one it has a node for, and registers each logical device.  Built without an RPATH, so inside a
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
	for (unsigned id = 0; id < rbln_logical_device_count(); id++) {
		rbln_registration *reg = NULL;
		if (rbln_register(id, &reg) != RBLN_OK) {
			fprintf(stderr, "devmgr_probe: %s\n", rbln_last_error());
			return 1;
		}
		printf("devmgr: rbln:%u registered\n", id);
		rbln_registration_free(reg);
	}
	return 0;
}
