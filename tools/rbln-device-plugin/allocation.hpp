// SPDX-License-Identifier: MIT
// Allocate's answer for one container, in the forms runtimes understand (the
// device-list strategies, as NVIDIA's plugin names them):
//   envvar           RBLN_VISIBLE_DEVICES, for rbln-container-runtime (RuntimeClass rbln)
//   cdi-annotations  the CDI annotation, for runtimes that read CDI names only there
//   cdi-cri          the CRI's CDIDevices field (kubelet >= 1.28 with DevicePluginCDIDevices)
//   device-specs     plain DeviceSpecs of /dev/rblnN and the accel/render node: any CRI
//                    runtime creates them, with no CDI and no shim (containerd 1.6)
#pragma once

#include <string>
#include <vector>

#include "deviceplugin.pb.h"
#include "inventory.hpp"

namespace rbln::k8s {

// The annotation key; CDI's convention is cdi.k8s.io/<plugin>.
inline constexpr const char *kCdiAnnotation = "cdi.k8s.io/rbln-device-plugin";

struct ListStrategies {
	bool envvar = false, cdi_annotations = false, cdi_cri = false, device_specs = false;
	bool operator==(const ListStrategies &) const = default;
};

// Debian 12's containerd (1.6) has no CDI: device-specs gives a pod its NPU
// there (and everywhere), envvar lets the rbln runtime add the library.
inline constexpr const char *kDefaultListStrategies = "device-specs,envvar";

// "device-specs,envvar", ...; throws std::invalid_argument naming an unknown
// or repeated strategy and the valid ones, or an empty list.
ListStrategies parse_list_strategies(const std::string &value);

// Throws std::invalid_argument naming an id that is not one of @npus.
v1beta1::ContainerAllocateResponse container_allocation(const std::vector<std::string> &ids,
							const std::vector<Npu> &npus, const ListStrategies &how);

} // namespace rbln::k8s
