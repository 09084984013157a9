// SPDX-License-Identifier: MIT
// A kubelet stand-in for the device-plugin tests, built from the published
// API (tools/k8s-api): it serves Registration on <dir>/kubelet.sock, keeps
// the registrations it takes, and calls a registered plugin's DevicePlugin
// service as the kubelet's device manager does.
//
// What it leaves out of a kubelet: no scheduling, no pod admission or
// topology manager (it calls GetPreferredAllocation and Allocate when a test
// says, not when a pod starts), no checkpoint of allocations, no CRI: the
// Allocate answers are checked, not handed to a container runtime.
#pragma once

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>

#include <grpcpp/grpcpp.h>

#include "deviceplugin.grpc.pb.h"

namespace rbln::test {

class KubeletStandIn {
public:
	// Serves on @dir/kubelet.sock, as a starting kubelet does.
	explicit KubeletStandIn(std::string dir);
	// Stops, and clears the directory's sockets as a restarting kubelet does.
	~KubeletStandIn();

	// The next registration taken, or nullopt after @timeout.
	std::optional<v1beta1::RegisterRequest> next_registration(std::chrono::milliseconds timeout);

	// A client of the plugin registered with @endpoint.
	std::unique_ptr<v1beta1::DevicePlugin::Stub> plugin(const std::string &endpoint) const;

private:
	class Service;
	std::string dir_;
	std::unique_ptr<Service> service_;
	std::unique_ptr<grpc::Server> server_;
};

// A ListAndWatch stream read in the background.
class DeviceStream {
public:
	explicit DeviceStream(v1beta1::DevicePlugin::Stub &plugin);
	~DeviceStream();

	// The first list, from the current one on, that satisfies @want,
	// waiting up to @timeout from now; nullopt if none did.
	std::optional<v1beta1::ListAndWatchResponse> wait_for(
		const std::function<bool(const v1beta1::ListAndWatchResponse &)> &want,
		std::chrono::milliseconds timeout);

private:
	grpc::ClientContext ctx_;
	std::unique_ptr<grpc::ClientReader<v1beta1::ListAndWatchResponse>> reader_;
	std::mutex mutex_;
	std::condition_variable arrived_;
	std::deque<v1beta1::ListAndWatchResponse> lists_;	// not looked at yet
	std::optional<v1beta1::ListAndWatchResponse> current_;	// the last looked at
	bool ended_ = false;
	std::thread thread_;
};

// The health the list gives device @id; nullopt when it is not listed.
std::optional<std::string> health_of(const v1beta1::ListAndWatchResponse &list, const std::string &id);

} // namespace rbln::test
