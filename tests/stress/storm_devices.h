// Where the storm finds things: paths by pattern, and the rbln device nodes
// (udev's /dev/rblnN links) as they are now, devices come and go.
#pragma once

#include <string>
#include <vector>

namespace storm {

std::vector<std::string> glob_paths(const char *pattern);

inline std::vector<std::string> device_nodes()
{
	return glob_paths("/dev/rbln[0-9]*");
}

}  // namespace storm
