// SPDX-License-Identifier: MIT
#include "request.hpp"

#include <algorithm>
#include <cerrno>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <rbln/grouping.hpp>

#include "cdi.hpp"

namespace rbln::ctk {

namespace {

std::string trim(const std::string &s)
{
	size_t b = s.find_first_not_of(" \t"), e = s.find_last_not_of(" \t");
	return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}

const NpuInfo &by_index(const std::vector<NpuInfo> &host, unsigned index)
{
	return *std::find_if(host.begin(), host.end(), [&](auto &n) { return n.index == index; });
}

} // namespace

std::optional<std::vector<NpuInfo>> npus_from_env(const std::vector<NpuInfo> &host,
						  const std::string &value)
{
	std::string v = trim(value);
	if (v.empty() || v == "void")
		return std::nullopt;
	if (v == "none")
		return std::vector<NpuInfo>{};
	if (v == "all")
		return host;
	std::vector<PhysicalNpu> physical;
	for (const auto &n : host)
		physical.push_back({n.index, n.uuid});
	std::vector<std::string> warnings;
	std::vector<NpuInfo> out;
	for (const auto &p : parse_visible_devices(physical, "RBLN_VISIBLE_DEVICES", v, warnings))
		out.push_back(by_index(host, p.index));
	return out;
}

std::vector<std::string> rbln_names_in_cdi_annotations(const std::vector<std::string> &values)
{
	const std::string prefix = std::string(kCdiKind) + "=";
	std::vector<std::string> names;
	for (const auto &value : values) {
		size_t pos = 0;
		while (pos <= value.size()) {
			size_t comma = value.find(',', pos);
			std::string entry = trim(value.substr(pos, comma == std::string::npos ? std::string::npos
											       : comma - pos));
			if (entry.starts_with(prefix))
				names.push_back(entry.substr(prefix.size()));
			if (comma == std::string::npos)
				break;
			pos = comma + 1;
		}
	}
	return names;
}

std::vector<NpuInfo> merge_npus(std::vector<NpuInfo> a, const std::vector<NpuInfo> &b)
{
	for (const auto &n : b)
		if (std::none_of(a.begin(), a.end(), [&](auto &x) { return x.index == n.index; }))
			a.push_back(n);
	return a;
}

} // namespace rbln::ctk
