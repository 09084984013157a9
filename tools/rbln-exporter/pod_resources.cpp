// SPDX-License-Identifier: MIT
#include "pod_resources.hpp"

#include <filesystem>

#include <fmt/format.h>
#include <grpcpp/grpcpp.h>

#include "podresources.grpc.pb.h"
#include "unix_socket.hpp"

namespace rbln::exporter {

std::map<std::string, PodRef> pods_by_device(const std::string &socket)
{
	std::map<std::string, PodRef> out;
	std::error_code ec;
	if (!std::filesystem::is_socket(socket, ec))
		return out;
	auto stub = v1::PodResourcesLister::NewStub(k8s::unix_channel(socket));
	grpc::ClientContext ctx;
	// A scrape must not hang on a stuck kubelet, but a slow one still answers:
	// this call connects anew, which took over 1 s in a loaded VM, and 5 s
	// stays inside Prometheus's default scrape timeout (10 s).
	ctx.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
	v1::ListPodResourcesResponse resp;
	auto status = stub->List(&ctx, v1::ListPodResourcesRequest(), &resp);
	if (!status.ok()) {
		fmt::print(stderr, "rbln-exporter: pod-resources List at {}: {}\n", socket, status.error_message());
		return out;
	}
	for (const auto &pod : resp.pod_resources())
		for (const auto &c : pod.containers())
			for (const auto &d : c.devices())
				if (d.resource_name().starts_with("rebellions.ai/"))
					for (const auto &id : d.device_ids())
						out[id] = {pod.name(), pod.namespace_(), c.name()};
	return out;
}

} // namespace rbln::exporter
