#include "tested_kernels.hpp"

#include <regex>

namespace rbln::smi {

namespace {

struct Series {
	const char *name;
	const char *abi_names;	// POSIX basic regular expression, as kernel-cache.sh uses it
};

constexpr Series tested[] = {
#include "tested_kernels.inc"
};

} // namespace

nlohmann::json tested_kernels(const std::string &release)
{
	nlohmann::json names = nlohmann::json::array(), mine = nullptr;
	for (const auto &s : tested) {
		names.push_back(s.name);
		if (mine.is_null() && std::regex_match(release, std::regex(s.abi_names, std::regex::basic)))
			mine = s.name;
	}
	return {{"series", names}, {"this_kernel", mine}};
}

} // namespace rbln::smi
