// SPDX-License-Identifier: MIT
#include "allocation.hpp"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cdi.hpp"

namespace rbln::k8s {

ListStrategies parse_list_strategies(const std::string &value)
{
	constexpr const char *kValid = "envvar, cdi-annotations, cdi-cri, device-specs";
	ListStrategies out;
	if (value.empty())
		throw std::invalid_argument(fmt::format("no device-list strategy given (valid, comma-separated: {})", kValid));
	std::vector<std::string> names;
	for (size_t start = 0;;) {
		const size_t comma = value.find(',', start);
		names.push_back(value.substr(start, comma == std::string::npos ? std::string::npos : comma - start));
		if (comma == std::string::npos)
			break;
		start = comma + 1;
	}
	for (const auto &name : names) {
		if (name.empty())
			throw std::invalid_argument(fmt::format(
				"no device-list strategy given between commas in '{}' (valid, comma-separated: {})", value, kValid));
		bool *flag = name == "envvar"		 ? &out.envvar
			     : name == "cdi-annotations" ? &out.cdi_annotations
			     : name == "cdi-cri"	 ? &out.cdi_cri
			     : name == "device-specs"	 ? &out.device_specs
							 : nullptr;
		if (!flag)
			throw std::invalid_argument(fmt::format(
				"unknown device-list strategy '{}' in '{}' (valid, comma-separated: {})", name, value, kValid));
		if (*flag)
			throw std::invalid_argument(fmt::format("device-list strategy '{}' given twice in '{}'", name, value));
		*flag = true;
	}
	return out;
}

v1beta1::ContainerAllocateResponse container_allocation(const std::vector<std::string> &ids,
							const std::vector<Npu> &npus, const ListStrategies &how)
{
	v1beta1::ContainerAllocateResponse out;
	std::vector<std::string> names;
	for (const auto &id : ids) {
		auto npu = std::ranges::find(npus, id, &Npu::uuid);
		if (npu == npus.end()) {
			std::vector<std::string> known;
			for (const auto &n : npus)
				known.push_back(n.uuid);
			throw std::invalid_argument(fmt::format("unknown device '{}' (this node has: {})", id,
								known.empty() ? "none" : fmt::format("{}", fmt::join(known, ", "))));
		}
		// rbln-ctk cdi generate names each NPU by uuid (and by index).
		names.push_back(fmt::format("{}={}", ctk::kCdiKind, npu->uuid));
		if (how.cdi_cri)
			out.add_cdi_devices()->set_name(names.back());
		if (how.device_specs)
			for (const auto &node : npu->nodes) {
				auto *d = out.add_devices();
				d->set_container_path(node);
				d->set_host_path(node);
				d->set_permissions("rw");
			}
	}
	if (how.cdi_annotations)
		(*out.mutable_annotations())[kCdiAnnotation] = fmt::format("{}", fmt::join(names, ","));
	if (how.envvar)
		(*out.mutable_envs())["RBLN_VISIBLE_DEVICES"] = fmt::format("{}", fmt::join(ids, ","));
	return out;
}

} // namespace rbln::k8s
