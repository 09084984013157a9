// SPDX-License-Identifier: MIT
// gRPC over the kubelet's unix sockets, for servers and clients alike.
#pragma once

#include <memory>
#include <string>

#include <grpcpp/grpcpp.h>

namespace rbln::k8s {

// Serves @service on the socket @path (its file replaced); nullptr if it cannot listen.
std::unique_ptr<grpc::Server> serve_on_unix_socket(const std::string &path, grpc::Service *service);

// A channel to the server on the socket @path.
std::shared_ptr<grpc::Channel> unix_channel(const std::string &path);

} // namespace rbln::k8s
