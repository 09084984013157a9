// SPDX-License-Identifier: MIT
// A stand-in for the kubelet's pod-resources API (v1 PodResourcesLister,
// built from the published definition in tools/k8s-api): List answers with
// the pods a test sets.  It leaves out everything else a kubelet does: the
// pods are not running, and only List is served.
#pragma once

#include <memory>
#include <string>

#include <grpcpp/grpcpp.h>

#include "podresources.grpc.pb.h"

namespace rbln::test {

class PodResourcesStandIn {
public:
	PodResourcesStandIn(std::string socket, v1::ListPodResourcesResponse pods);
	~PodResourcesStandIn();

private:
	class Service;
	std::string socket_;
	std::unique_ptr<Service> service_;
	std::unique_ptr<grpc::Server> server_;
};

} // namespace rbln::test
