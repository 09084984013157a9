// SPDX-License-Identifier: MIT
#include "unix_socket.hpp"

#include <filesystem>

namespace rbln::k8s {

std::unique_ptr<grpc::Server> serve_on_unix_socket(const std::string &path, grpc::Service *service)
{
	std::error_code ec;
	std::filesystem::remove(path, ec);	// a stale socket from an earlier life
	grpc::ServerBuilder builder;
	builder.AddListeningPort("unix://" + path, grpc::InsecureServerCredentials());
	builder.RegisterService(service);
	return builder.BuildAndStart();
}

std::shared_ptr<grpc::Channel> unix_channel(const std::string &path)
{
	return grpc::CreateChannel("unix://" + path, grpc::InsecureChannelCredentials());
}

} // namespace rbln::k8s
