/* Build check: the C API header is valid, warning-free ISO C for C callers. */
#include <rbln/devmgr.h>

size_t rbln_check_info_size(void);
size_t rbln_check_info_size(void)
{
	rbln_device_info info = {0};

	info.struct_size = sizeof(info);
	return info.struct_size;
}
