// SPDX-License-Identifier: MIT
#include "allocation.hpp"

#include <algorithm>
#include <stdexcept>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cdi.hpp"

namespace rbln::k8s {

v1beta1::ContainerAllocateResponse container_allocation(const std::vector<std::string> &ids,
							const std::vector<Npu> &npus)
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
		out.add_cdi_devices()->set_name(names.back());
	}
	(*out.mutable_annotations())[kCdiAnnotation] = fmt::format("{}", fmt::join(names, ","));
	(*out.mutable_envs())["RBLN_VISIBLE_DEVICES"] = fmt::format("{}", fmt::join(ids, ","));
	return out;
}

} // namespace rbln::k8s
