// SPDX-License-Identifier: MIT
// Small text helpers the toolkit's parsers share.
#pragma once

#include <string>
#include <vector>

namespace rbln::ctk {

// @s without leading and trailing spaces and tabs.
std::string trim(const std::string &s);
// The pieces of @s between @sep, empty ones included ("a::b" -> a, "", b).
std::vector<std::string> split(const std::string &s, char sep);

} // namespace rbln::ctk
