// SPDX-License-Identifier: MIT
#include "request.hpp"

#include <algorithm>
#include <cerrno>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <rbln/grouping.hpp>

#include "cdi.hpp"
#include "text.hpp"

namespace rbln::ctk {

namespace {

const NpuInfo &by_index(const std::vector<NpuInfo> &host, unsigned index)
{
	return *std::find_if(host.begin(), host.end(), [&](auto &n) { return n.index == index; });
}

} // namespace

std::optional<std::vector<NpuInfo>> npus_from_env(const std::vector<NpuInfo> &host,
						  const std::string &value)
{
	// "void" or empty: no request, the shim's own reading; every other word
	// (all, none, lists) is libdevmgr's, so both sides read the variable alike.
	std::string v = trim(value);
	if (v.empty() || v == "void")
		return std::nullopt;
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
	for (const auto &value : values)
		for (const auto &piece : split(value, ',')) {
			std::string entry = trim(piece);
			if (entry.starts_with(prefix))
				names.push_back(entry.substr(prefix.size()));
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
