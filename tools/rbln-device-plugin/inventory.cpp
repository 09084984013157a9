// SPDX-License-Identifier: MIT
#include "inventory.hpp"

#include <fstream>
#include <stdexcept>

#include <fmt/format.h>

#include "rbln/enumerate.hpp"

namespace rbln::k8s {

std::optional<std::string> family_of(const std::string &sku)
{
	if (sku.starts_with("atom"))
		return "ATOM";
	if (sku.starts_with("rebel"))
		return "REBEL";
	return std::nullopt;
}

std::vector<std::string> resource_names(ResourceMode mode)
{
	if (mode == ResourceMode::single)
		return {fmt::format("{}/npu", kResourceDomain)};
	return {fmt::format("{}/ATOM", kResourceDomain), fmt::format("{}/REBEL", kResourceDomain)};
}

std::string resource_of(const Npu &npu, ResourceMode mode)
{
	if (mode == ResourceMode::single)
		return fmt::format("{}/npu", kResourceDomain);
	// An unknown product is offered as the generic resource nobody serves
	// in family mode, rather than under a wrong family.
	return fmt::format("{}/{}", kResourceDomain, family_of(npu.sku).value_or("npu"));
}

ResourceMode parse_resource_mode(const std::string &value)
{
	if (value == "family")
		return ResourceMode::family;
	if (value == "npu")
		return ResourceMode::single;
	throw std::invalid_argument(fmt::format(
		"unknown resource mode '{}' (valid: family, for rebellions.ai/ATOM and rebellions.ai/REBEL; "
		"npu, for one rebellions.ai/npu)", value));
}

namespace {

int read_numa_node(const std::string &sysfs)
{
	std::ifstream in(sysfs + "/numa_node");
	int node = -1;
	return (in >> node) ? node : -1;
}

} // namespace

std::vector<Npu> scan_npus()
{
	std::vector<Npu> out;
	for (const auto &n : rbln::enumerate_npus())
		out.push_back({n.index, n.uuid, n.sku, n.pci_bus_id, read_numa_node(n.sysfs), n.status != "FAULT"});
	return out;
}

} // namespace rbln::k8s
