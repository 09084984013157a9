// SPDX-License-Identifier: MIT
// One device plugin: the DevicePlugin service for one resource on its own
// socket in the kubelet's device-plugin directory, and its registration.
#pragma once

#include <memory>
#include <string>

#include <grpcpp/grpcpp.h>

#include "allocation.hpp"
#include "device_table.hpp"

namespace rbln::k8s {

inline constexpr const char *kApiVersion = "v1beta1";
inline constexpr const char *kKubeletSocket = "kubelet.sock";

class PluginServer {
public:
	PluginServer(std::string resource, ResourceMode mode, DeviceTable &table, std::string dir,
		     ListStrategies strategies);
	~PluginServer();

	// Listens on the socket (replacing a stale one); throws std::runtime_error.
	void start();
	// Ends the streams and removes the socket.
	void stop();
	// False once the socket file is gone (a restarted kubelet clears the directory).
	bool socket_present() const;
	// Registers with the kubelet; throws std::runtime_error with its answer.
	void register_with_kubelet() const;

	const std::string &resource() const { return resource_; }

private:
	class Service;
	std::string resource_, dir_, endpoint_;
	ResourceMode mode_;
	ListStrategies strategies_;
	DeviceTable &table_;
	std::unique_ptr<Service> service_;
	std::unique_ptr<grpc::Server> server_;
};

} // namespace rbln::k8s
