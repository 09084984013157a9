// RBLN_PROFILER's values, and the label helper: pure functions.
#include <strings.h>

#include <fmt/format.h>

#include "rbln/profile.hpp"

namespace rbln::profile {

std::optional<bool> parse_switch(std::string_view value)
{
	const std::string v(value);
	for (const char *on : {"1", "on", "true", "yes"})
		if (!strcasecmp(v.c_str(), on))
			return true;
	if (v.empty())
		return false;
	for (const char *off : {"0", "off", "false", "no"})
		if (!strcasecmp(v.c_str(), off))
			return false;
	return std::nullopt;
}

std::string label(unsigned instance, unsigned sequence, unsigned workload, std::string_view what)
{
	std::string l = fmt::format("i{}_{}_W{}", instance, sequence, workload);
	if (!what.empty())
		l += fmt::format("_{}", what);
	return l;
}

} // namespace rbln::profile
