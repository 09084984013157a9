// SPDX-License-Identifier: MIT
#include "text.hpp"

namespace rbln::ctk {

std::string trim(const std::string &s)
{
	size_t b = s.find_first_not_of(" \t"), e = s.find_last_not_of(" \t");
	return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}

std::vector<std::string> split(const std::string &s, char sep)
{
	std::vector<std::string> out;
	size_t pos = 0;
	while (true) {
		size_t at = s.find(sep, pos);
		out.push_back(s.substr(pos, at == std::string::npos ? std::string::npos : at - pos));
		if (at == std::string::npos)
			return out;
		pos = at + 1;
	}
}

} // namespace rbln::ctk
