// SPDX-License-Identifier: MIT
#include "kubelet_standin.hpp"

#include <filesystem>

#include "unix_socket.hpp"

namespace rbln::test {

namespace fs = std::filesystem;

class KubeletStandIn::Service final : public v1beta1::Registration::Service {
public:
	grpc::Status Register(grpc::ServerContext *, const v1beta1::RegisterRequest *req, v1beta1::Empty *) override
	{
		if (req->version() != "v1beta1")
			return {grpc::StatusCode::INVALID_ARGUMENT, "unsupported version " + req->version()};
		std::lock_guard lock(mutex_);
		taken_.push_back(*req);
		arrived_.notify_all();
		return grpc::Status::OK;
	}

	std::optional<v1beta1::RegisterRequest> next(std::chrono::milliseconds timeout)
	{
		std::unique_lock lock(mutex_);
		if (!arrived_.wait_for(lock, timeout, [&] { return !taken_.empty(); }))
			return std::nullopt;
		auto r = taken_.front();
		taken_.pop_front();
		return r;
	}

private:
	std::mutex mutex_;
	std::condition_variable arrived_;
	std::deque<v1beta1::RegisterRequest> taken_;
};

KubeletStandIn::KubeletStandIn(std::string dir) : dir_(std::move(dir)), service_(std::make_unique<Service>())
{
	server_ = k8s::serve_on_unix_socket(dir_ + "/kubelet.sock", service_.get());
	if (!server_)
		throw std::runtime_error("kubelet stand-in: cannot listen in " + dir_);
}

KubeletStandIn::~KubeletStandIn()
{
	server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1));
	std::error_code ec;
	for (const auto &e : fs::directory_iterator(dir_, ec))
		if (e.is_socket())
			fs::remove(e.path(), ec);
}

std::optional<v1beta1::RegisterRequest> KubeletStandIn::next_registration(std::chrono::milliseconds timeout)
{
	return service_->next(timeout);
}

std::unique_ptr<v1beta1::DevicePlugin::Stub> KubeletStandIn::plugin(const std::string &endpoint) const
{
	return v1beta1::DevicePlugin::NewStub(k8s::unix_channel(dir_ + "/" + endpoint));
}

DeviceStream::DeviceStream(v1beta1::DevicePlugin::Stub &plugin)
	: reader_(plugin.ListAndWatch(&ctx_, v1beta1::Empty())), thread_([this] {
		  v1beta1::ListAndWatchResponse list;
		  while (reader_->Read(&list)) {
			  std::lock_guard lock(mutex_);
			  lists_.push_back(list);
			  arrived_.notify_all();
		  }
		  std::lock_guard lock(mutex_);
		  ended_ = true;
		  arrived_.notify_all();
	  })
{
}

DeviceStream::~DeviceStream()
{
	ctx_.TryCancel();
	thread_.join();
	reader_->Finish();
}

std::optional<v1beta1::ListAndWatchResponse> DeviceStream::wait_for(
	const std::function<bool(const v1beta1::ListAndWatchResponse &)> &want, std::chrono::milliseconds timeout)
{
	const auto deadline = std::chrono::steady_clock::now() + timeout;
	std::unique_lock lock(mutex_);
	if (current_ && want(*current_))
		return current_;
	for (;;) {
		while (!lists_.empty()) {
			current_ = std::move(lists_.front());
			lists_.pop_front();
			if (want(*current_))
				return current_;
		}
		if (ended_)
			return std::nullopt;
		if (arrived_.wait_until(lock, deadline) == std::cv_status::timeout && lists_.empty())
			return std::nullopt;
	}
}

std::optional<std::string> health_of(const v1beta1::ListAndWatchResponse &list, const std::string &id)
{
	for (const auto &d : list.devices())
		if (d.id() == id)
			return d.health();
	return std::nullopt;
}

} // namespace rbln::test
