// SPDX-License-Identifier: MIT
#include "inventory.hpp"

#include <fstream>
#include <stdexcept>

#include <unistd.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

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

// "" when usable, else what is wrong, from the status and the chiplets' status.
std::string health_problem(const rbln::NpuInfo &n)
{
	std::vector<std::string> problems;
	std::ifstream status_file(n.sysfs + "/status");
	std::string status;
	if (!std::getline(status_file, status))
		problems.push_back("status unreadable");
	else if (status == "FAULT" || status == "FINISH" || status == "INIT")
		problems.push_back("status " + status);
	for (unsigned c = 0; c < n.chiplet_count; c++) {
		std::ifstream in(fmt::format("{}/chiplet{}/status", n.sysfs, c));
		std::string s;
		if (std::getline(in, s) && s == "lost")
			problems.push_back(fmt::format("chiplet {} lost", c));
	}
	return fmt::format("{}", fmt::join(problems, ", "));
}

} // namespace

std::vector<Npu> scan_npus()
{
	std::vector<Npu> out;
	for (const auto &n : rbln::enumerate_npus()) {
		auto problem = health_problem(n);
		std::vector<std::string> nodes;
		const auto rbln_node = fmt::format("/dev/rbln{}", n.index);
		if (::access(rbln_node.c_str(), F_OK) == 0)
			nodes.push_back(rbln_node);
		if (n.node != rbln_node)
			nodes.push_back(n.node);
		out.push_back({n.index, n.uuid, n.sku, n.pci_bus_id, read_numa_node(n.sysfs), problem.empty(),
			       problem, nodes});
	}
	return out;
}

} // namespace rbln::k8s
