// SPDX-License-Identifier: MIT
// Allocate's answer for one container: CDI device names (the CRI field and
// the CDI annotation, for runtimes that read only annotations) and
// RBLN_VISIBLE_DEVICES for runtimes without CDI (rbln-container-runtime).
#pragma once

#include <string>
#include <vector>

#include "deviceplugin.pb.h"
#include "inventory.hpp"

namespace rbln::k8s {

// The annotation key; CDI's convention is cdi.k8s.io/<plugin>.
inline constexpr const char *kCdiAnnotation = "cdi.k8s.io/rbln-device-plugin";

// Throws std::invalid_argument naming an id that is not one of @npus.
v1beta1::ContainerAllocateResponse container_allocation(const std::vector<std::string> &ids,
							const std::vector<Npu> &npus);

} // namespace rbln::k8s
