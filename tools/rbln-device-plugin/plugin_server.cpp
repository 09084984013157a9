// SPDX-License-Identifier: MIT
#include "plugin_server.hpp"

#include <atomic>
#include <filesystem>
#include <stdexcept>

#include <fmt/format.h>

#include "allocation.hpp"
#include "deviceplugin.grpc.pb.h"
#include "preferred.hpp"
#include "unix_socket.hpp"

namespace rbln::k8s {

namespace fs = std::filesystem;
using namespace std::chrono_literals;

class PluginServer::Service final : public v1beta1::DevicePlugin::Service {
public:
	Service(std::string resource, ResourceMode mode, DeviceTable &table, ListStrategies strategies)
		: resource_(std::move(resource)), mode_(mode), table_(table), strategies_(strategies) {}

	void stop()
	{
		stopping_ = true;
		table_.wake_all();
	}

	grpc::Status GetDevicePluginOptions(grpc::ServerContext *, const v1beta1::Empty *,
					    v1beta1::DevicePluginOptions *out) override
	{
		out->set_get_preferred_allocation_available(true);
		return grpc::Status::OK;
	}

	grpc::Status ListAndWatch(grpc::ServerContext *ctx, const v1beta1::Empty *,
				  grpc::ServerWriter<v1beta1::ListAndWatchResponse> *writer) override
	{
		uint64_t version = 0;
		while (!stopping_ && !ctx->IsCancelled()) {
			v1beta1::ListAndWatchResponse list;
			for (const auto &n : mine(&version)) {
				auto *d = list.add_devices();
				d->set_id(n.uuid);
				d->set_health(n.healthy ? "Healthy" : "Unhealthy");
				if (n.numa_node >= 0)
					d->mutable_topology()->add_nodes()->set_id(n.numa_node);
			}
			if (!writer->Write(list))
				break;
			// Short waits, to notice a cancelled stream or a shutdown.
			while (!stopping_ && !ctx->IsCancelled() && !table_.wait_change(version, 500ms)) {
			}
		}
		return grpc::Status::OK;
	}

	grpc::Status GetPreferredAllocation(grpc::ServerContext *, const v1beta1::PreferredAllocationRequest *req,
					    v1beta1::PreferredAllocationResponse *out) override
	{
		const auto npus = mine();
		for (const auto &c : req->container_requests()) {
			if (c.allocation_size() < 0)
				return {grpc::StatusCode::INVALID_ARGUMENT,
					fmt::format("allocation_size {} is negative", c.allocation_size())};
			std::vector<Candidate> available;
			for (const auto &id : c.available_deviceids()) {
				auto n = std::ranges::find(npus, id, &Npu::uuid);
				if (n == npus.end())
					return unknown(id);
				available.push_back({id, n->numa_node, n->index});
			}
			std::vector<std::string> must(c.must_include_deviceids().begin(), c.must_include_deviceids().end());
			auto *r = out->add_container_responses();
			for (auto &id : preferred_allocation(available, must, size_t(c.allocation_size())))
				r->add_deviceids(std::move(id));
		}
		return grpc::Status::OK;
	}

	grpc::Status Allocate(grpc::ServerContext *, const v1beta1::AllocateRequest *req,
			      v1beta1::AllocateResponse *out) override
	{
		const auto npus = mine();
		try {
			for (const auto &c : req->container_requests())
				*out->add_container_responses() = container_allocation(
					{c.devices_ids().begin(), c.devices_ids().end()}, npus, strategies_);
		} catch (const std::invalid_argument &e) {
			return {grpc::StatusCode::INVALID_ARGUMENT, fmt::format("{}: {}", resource_, e.what())};
		}
		return grpc::Status::OK;
	}

	grpc::Status PreStartContainer(grpc::ServerContext *, const v1beta1::PreStartContainerRequest *,
				       v1beta1::PreStartContainerResponse *) override
	{
		return grpc::Status::OK;	// not requested in the options
	}

private:
	// This resource's NPUs.
	std::vector<Npu> mine(uint64_t *version = nullptr) const
	{
		auto all = table_.snapshot(version);
		std::erase_if(all, [&](const Npu &n) { return resource_of(n, mode_) != resource_; });
		return all;
	}

	grpc::Status unknown(const std::string &id) const
	{
		return {grpc::StatusCode::INVALID_ARGUMENT,
			fmt::format("{}: unknown device '{}' (not one of this resource's NPUs)", resource_, id)};
	}

	std::string resource_;
	ResourceMode mode_;
	DeviceTable &table_;
	ListStrategies strategies_;
	std::atomic<bool> stopping_{false};
};

PluginServer::PluginServer(std::string resource, ResourceMode mode, DeviceTable &table, std::string dir,
			   ListStrategies strategies)
	: resource_(std::move(resource)), dir_(std::move(dir)),
	  // rebellions.ai/REBEL -> rbln-REBEL.sock
	  endpoint_(fmt::format("rbln-{}.sock", resource_.substr(resource_.find('/') + 1))),
	  mode_(mode), strategies_(strategies), table_(table)
{
}

PluginServer::~PluginServer()
{
	stop();
}

void PluginServer::start()
{
	stop();
	const auto path = fs::path(dir_) / endpoint_;
	// A fresh service: a stopped one has ended its streams for good.
	service_ = std::make_unique<Service>(resource_, mode_, table_, strategies_);
	server_ = serve_on_unix_socket(path, service_.get());
	if (!server_)
		throw std::runtime_error(fmt::format("{}: cannot listen on {} (does {} exist and is it writable?)",
						     resource_, path.string(), dir_));
}

void PluginServer::stop()
{
	if (!server_)
		return;
	service_->stop();
	server_->Shutdown(std::chrono::system_clock::now() + 2s);
	server_.reset();
	std::error_code ec;
	fs::remove(fs::path(dir_) / endpoint_, ec);
}

bool PluginServer::socket_present() const
{
	std::error_code ec;
	return server_ && fs::is_socket(fs::path(dir_) / endpoint_, ec);
}

void PluginServer::register_with_kubelet() const
{
	const auto kubelet = fs::path(dir_) / kKubeletSocket;
	auto stub = v1beta1::Registration::NewStub(unix_channel(kubelet));
	v1beta1::RegisterRequest req;
	req.set_version(kApiVersion);
	req.set_endpoint(endpoint_);
	req.set_resource_name(resource_);
	req.mutable_options()->set_get_preferred_allocation_available(true);
	grpc::ClientContext ctx;
	ctx.set_deadline(std::chrono::system_clock::now() + 5s);
	v1beta1::Empty empty;
	auto status = stub->Register(&ctx, req, &empty);
	if (!status.ok())
		throw std::runtime_error(fmt::format("{}: the kubelet at {} refused the registration: {}",
						     resource_, kubelet.string(), status.error_message()));
}

} // namespace rbln::k8s
