#include "storm_devices.h"

#include <glob.h>

namespace storm {

std::vector<std::string> glob_paths(const char *pattern)
{
	std::vector<std::string> paths;
	glob_t g{};
	if (::glob(pattern, 0, nullptr, &g) == 0)
		paths.assign(g.gl_pathv, g.gl_pathv + g.gl_pathc);
	::globfree(&g);
	return paths;
}

}  // namespace storm
