// SPDX-License-Identifier: MIT
// Which pod each NPU is given to, from the kubelet's pod-resources API
// (v1 PodResourcesLister.List) where its socket exists.
#pragma once

#include <map>
#include <string>

#include "sample.hpp"

namespace rbln::exporter {

inline constexpr const char *kPodResourcesSocket = "/var/lib/kubelet/pod-resources/kubelet.sock";

// Device id (NPU uuid) -> pod, for the rebellions.ai resources.  Empty when
// the socket is absent; a failing call is reported on stderr and gives empty.
std::map<std::string, PodRef> pods_by_device(const std::string &socket);

} // namespace rbln::exporter
