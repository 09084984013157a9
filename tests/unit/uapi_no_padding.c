/* Build check: no struct of the UAPI header may contain implicit padding. */
#include <drm.h>

#pragma GCC diagnostic push
#pragma GCC diagnostic error "-Wpadded"
#include "rbln_drm.h"
#pragma GCC diagnostic pop
