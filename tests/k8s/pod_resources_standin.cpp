// SPDX-License-Identifier: MIT
#include "pod_resources_standin.hpp"

#include <filesystem>

#include "unix_socket.hpp"

namespace rbln::test {

class PodResourcesStandIn::Service final : public v1::PodResourcesLister::Service {
public:
	explicit Service(v1::ListPodResourcesResponse pods) : pods_(std::move(pods)) {}
	grpc::Status List(grpc::ServerContext *, const v1::ListPodResourcesRequest *,
			  v1::ListPodResourcesResponse *out) override
	{
		*out = pods_;
		return grpc::Status::OK;
	}

private:
	const v1::ListPodResourcesResponse pods_;
};

PodResourcesStandIn::PodResourcesStandIn(std::string socket, v1::ListPodResourcesResponse pods)
	: socket_(std::move(socket)), service_(std::make_unique<Service>(std::move(pods)))
{
	server_ = k8s::serve_on_unix_socket(socket_, service_.get());
	if (!server_)
		throw std::runtime_error("pod-resources stand-in: cannot listen on " + socket_);
}

PodResourcesStandIn::~PodResourcesStandIn()
{
	server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1));
	std::error_code ec;
	std::filesystem::remove(socket_, ec);
}

} // namespace rbln::test
