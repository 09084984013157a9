// SPDX-License-Identifier: MIT
// rbln-device-plugin against the real rbln.ko, driven by the kubelet
// stand-in (kubelet_standin.hpp says what it leaves out of a kubelet).
#include <csignal>
#include <filesystem>
#include <set>

#include <sys/wait.h>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "cdi.hpp"
#include "child_process.hpp"
#include "kubelet_standin.hpp"
#include "rbln/enumerate.hpp"
#include "rbln_test_util.h"

namespace fs = std::filesystem;
using namespace std::chrono;
using namespace std::chrono_literals;
using namespace rbln::test;
using List = v1beta1::ListAndWatchResponse;

namespace {

std::set<std::string> ids_of(const List &list)
{
	std::set<std::string> out;
	for (const auto &d : list.devices())
		out.insert(d.id());
	return out;
}

// The NUMA node the plugin gives @uuid, as sysfs spells it ("-1": none).
std::string numa_of(const List &list, const std::string &uuid)
{
	for (const auto &d : list.devices())
		if (d.id() == uuid)
			return d.topology().nodes_size() == 1 ? std::to_string(d.topology().nodes(0).id())
			       : d.topology().nodes_size() == 0 ? "-1" : "several";
	return "missing";
}

class DevicePlugin : public ::testing::Test {
protected:
	void SetUp() override
	{
		char tmpl[] = "/tmp/rbln-dp-XXXXXX";
		dir_ = ::mkdtemp(tmpl);
		kubelet_ = std::make_unique<KubeletStandIn>(dir_);
		for (const auto &n : rbln::enumerate_npus())
			uuids_.push_back(n.uuid);
		ASSERT_EQ(uuids_.size(), 2u) << "suite.sh loads an ATOM and a Rebel100";
	}

	void TearDown() override
	{
		if (pid_ > 0) {
			// SIGTERM: a clean stop that takes its sockets away.
			const int status = terminate(pid_);
			EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "exit status " << status;
			for (const auto &e : fs::directory_iterator(dir_))
				EXPECT_NE(e.path().filename().string().rfind("rbln-", 0), 0u) << e.path() << " left behind";
		}
		kubelet_.reset();
		fs::remove_all(dir_);
	}

	// Starts the plugin and takes its registrations.
	std::vector<v1beta1::RegisterRequest> start(const std::string &mode, size_t registrations)
	{
		const std::string bin = build_dir() + "/cmake/tools/rbln-device-plugin/rbln-device-plugin";
		pid_ = spawn({bin, "--resource-mode", mode, "--kubelet-dir", dir_});
		EXPECT_GT(pid_, 0) << bin;
		std::vector<v1beta1::RegisterRequest> out;
		while (out.size() < registrations) {
			auto r = kubelet_->next_registration(30s);
			if (!r)
				break;
			out.push_back(*r);
		}
		EXPECT_EQ(out.size(), registrations);
		return out;
	}

	std::string dir_;
	std::unique_ptr<KubeletStandIn> kubelet_;
	std::vector<std::string> uuids_;	// index order
	pid_t pid_ = -1;
};

} // namespace

TEST_F(DevicePlugin, RegistersAndListsTheNpusWithTopology)
{
	auto regs = start("npu", 1);
	ASSERT_EQ(regs.size(), 1u);
	EXPECT_EQ(regs[0].version(), "v1beta1");
	EXPECT_EQ(regs[0].resource_name(), "rebellions.ai/npu");
	EXPECT_EQ(regs[0].endpoint(), "rbln-npu.sock");
	EXPECT_TRUE(regs[0].options().get_preferred_allocation_available());

	auto plugin = kubelet_->plugin(regs[0].endpoint());
	grpc::ClientContext ctx;
	v1beta1::DevicePluginOptions options;
	ASSERT_TRUE(plugin->GetDevicePluginOptions(&ctx, {}, &options).ok());
	EXPECT_TRUE(options.get_preferred_allocation_available());
	EXPECT_FALSE(options.pre_start_required());

	DeviceStream stream(*plugin);
	auto list = stream.wait_for([](const List &) { return true; }, 10s);
	ASSERT_TRUE(list);
	EXPECT_EQ(ids_of(*list), std::set<std::string>(uuids_.begin(), uuids_.end()));
	for (const auto &n : rbln::enumerate_npus()) {
		EXPECT_EQ(health_of(*list, n.uuid), "Healthy");
		auto numa = read_file(n.sysfs + "/numa_node");
		ASSERT_TRUE(numa);
		EXPECT_EQ(numa_of(*list, n.uuid), *numa) << n.uuid;
	}
}

// On one NUMA node a plugin saying node 0 for every NPU passes the test
// above; the simulator puts NPU N on node N modulo the nodes online.
TEST_F(DevicePlugin, TopologyFollowsTheNpusNodes)
{
	const auto online = read_file("/sys/devices/system/node/online");	// none without CONFIG_NUMA
	if (online.value_or("0") == "0")
		GTEST_SKIP() << "one NUMA node: boot the VM with two (RBLN_VM_QEMU_ARGS, README)";
	auto regs = start("npu", 1);
	ASSERT_EQ(regs.size(), 1u);
	auto plugin = kubelet_->plugin(regs[0].endpoint());
	DeviceStream stream(*plugin);
	auto list = stream.wait_for([](const List &) { return true; }, 10s);
	ASSERT_TRUE(list);
	EXPECT_EQ(numa_of(*list, uuids_[0]), "0");
	EXPECT_EQ(numa_of(*list, uuids_[1]), "1");
}

TEST_F(DevicePlugin, OneResourcePerFamily)
{
	auto regs = start("family", 2);
	ASSERT_EQ(regs.size(), 2u);
	std::map<std::string, std::string> endpoint;
	for (const auto &r : regs)
		endpoint[r.resource_name()] = r.endpoint();
	ASSERT_TRUE(endpoint.contains("rebellions.ai/ATOM"));
	ASSERT_TRUE(endpoint.contains("rebellions.ai/REBEL"));
	// suite.sh: NPU 0 is an ATOM, NPU 1 a Rebel100.
	for (auto [resource, uuid] : {std::pair{"rebellions.ai/ATOM", uuids_[0]}, {"rebellions.ai/REBEL", uuids_[1]}}) {
		auto plugin = kubelet_->plugin(endpoint[resource]);
		DeviceStream stream(*plugin);
		auto list = stream.wait_for([](const List &) { return true; }, 10s);
		ASSERT_TRUE(list) << resource;
		EXPECT_EQ(ids_of(*list), std::set<std::string>{uuid}) << resource;
	}
}

TEST_F(DevicePlugin, HealthFollowsFaultsResetsAndHotplug)
{
	auto regs = start("npu", 1);
	ASSERT_EQ(regs.size(), 1u);
	auto plugin = kubelet_->plugin(regs[0].endpoint());
	DeviceStream stream(*plugin);
	const std::string npu1 = uuids_[1];
	ASSERT_TRUE(stream.wait_for([&](const List &l) { return health_of(l, npu1) == "Healthy"; }, 10s));

	// A memory error faults the NPU: Unhealthy within a second.
	const auto t0 = steady_clock::now();
	ASSERT_EQ(write_file("/sys/kernel/debug/rbln/rbln1/memory_error", "0"), 0);
	ASSERT_TRUE(stream.wait_for([&](const List &l) { return health_of(l, npu1) == "Unhealthy"; }, 5s));
	const auto took = duration_cast<milliseconds>(steady_clock::now() - t0);
	EXPECT_LT(took, 1000ms) << "Unhealthy after " << took.count() << " ms";
	RecordProperty("unhealthy_after_ms", int(took.count()));
	EXPECT_EQ(read_file("/sys/bus/rbln_sim/devices/rbln_sim1/status"), "FAULT");

	// rbln-smi reset brings it back.
	const char *smi = std::getenv("RBLN_SMI");
	ASSERT_NE(smi, nullptr) << "RBLN_SMI is set by tests/vm/suite.sh";
	auto reset = run_shell(fmt::format("{} reset -i 1 2>&1", smi));
	ASSERT_EQ(reset.exit, 0) << reset.out;
	EXPECT_TRUE(stream.wait_for([&](const List &l) { return health_of(l, npu1) == "Healthy"; }, 5s));

	// A hot-added NPU joins the list, healthy; removed it goes; added again it is back.
	ASSERT_EQ(sim_new_device("5 rebel100 32"), 0);
	auto added = rbln::find_npu("5").uuid;
	EXPECT_TRUE(stream.wait_for([&](const List &l) { return health_of(l, added) == "Healthy"; }, 5s));
	ASSERT_EQ(sim_del_device(5), 0);
	EXPECT_TRUE(stream.wait_for([&](const List &l) { return !health_of(l, added) && l.devices_size() == 2; }, 5s));
	ASSERT_EQ(sim_new_device("5 rebel100 32"), 0);
	EXPECT_TRUE(stream.wait_for([&](const List &l) { return health_of(l, added) == "Healthy"; }, 5s));
	ASSERT_EQ(sim_del_device(5), 0);
	EXPECT_TRUE(stream.wait_for([&](const List &l) { return l.devices_size() == 2; }, 5s));
}

TEST_F(DevicePlugin, AllocatedCdiNamesResolveInTheGeneratedSpec)
{
	auto regs = start("npu", 1);
	ASSERT_EQ(regs.size(), 1u);
	auto plugin = kubelet_->plugin(regs[0].endpoint());

	// The spec rbln-ctk writes, in a directory of the test's own.
	const std::string cdi_dir = dir_ + "/cdi";
	auto gen = run_shell(fmt::format("{}/cmake/tools/rbln-ctk/rbln-ctk cdi generate --output {}/rbln.yaml 2>&1",
					 build_dir(), cdi_dir));
	ASSERT_EQ(gen.exit, 0) << gen.out;
	::setenv("RBLN_CDI_SPEC_DIRS", cdi_dir.c_str(), 1);

	// GetPreferredAllocation: a request for both gets both; one that must
	// include NPU 1 and wants one gets NPU 1.
	{
		grpc::ClientContext ctx;
		v1beta1::PreferredAllocationRequest req;
		auto *c = req.add_container_requests();
		for (const auto &u : uuids_)
			c->add_available_deviceids(u);
		c->add_must_include_deviceids(uuids_[1]);
		c->set_allocation_size(1);
		v1beta1::PreferredAllocationResponse resp;
		ASSERT_TRUE(plugin->GetPreferredAllocation(&ctx, req, &resp).ok());
		ASSERT_EQ(resp.container_responses_size(), 1);
		EXPECT_EQ(std::vector<std::string>(resp.container_responses(0).deviceids().begin(),
						   resp.container_responses(0).deviceids().end()),
			  std::vector<std::string>{uuids_[1]});
	}

	grpc::ClientContext ctx;
	v1beta1::AllocateRequest req;
	auto *c = req.add_container_requests();
	for (const auto &u : uuids_)
		c->add_devices_ids(u);
	v1beta1::AllocateResponse resp;
	ASSERT_TRUE(plugin->Allocate(&ctx, req, &resp).ok());
	ASSERT_EQ(resp.container_responses_size(), 1);
	const auto &r = resp.container_responses(0);
	ASSERT_EQ(r.cdi_devices_size(), 2);
	std::vector<std::string> names;
	for (int i = 0; i < 2; i++) {
		const auto &npu = rbln::find_npu(uuids_[i]);
		names.push_back(r.cdi_devices(i).name());
		const std::string prefix = std::string(rbln::ctk::kCdiKind) + "=";
		ASSERT_EQ(names.back().rfind(prefix, 0), 0u) << names.back();
		// The name resolves in the spec to edits that give this NPU's node.
		auto edits = rbln::ctk::cdi_device_edits(names.back().substr(prefix.size()));
		EXPECT_NE(edits.dump().find(npu.node), std::string::npos) << edits.dump();
	}
	EXPECT_EQ(r.annotations().at("cdi.k8s.io/rbln-device-plugin"), names[0] + "," + names[1]);
	EXPECT_EQ(r.envs().at("RBLN_VISIBLE_DEVICES"), uuids_[0] + "," + uuids_[1]);
	::unsetenv("RBLN_CDI_SPEC_DIRS");

	// A device the plugin does not have: refused, named.
	grpc::ClientContext bad_ctx;
	v1beta1::AllocateRequest bad;
	bad.add_container_requests()->add_devices_ids("no-such-npu");
	auto status = plugin->Allocate(&bad_ctx, bad, &resp);
	EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
	EXPECT_NE(status.error_message().find("'no-such-npu'"), std::string::npos) << status.error_message();
}

TEST_F(DevicePlugin, RegistersAgainWhenTheKubeletRestarts)
{
	ASSERT_EQ(start("npu", 1).size(), 1u);
	// A restarting kubelet: its socket goes (with the plugins'), then comes back.
	kubelet_.reset();
	kubelet_ = std::make_unique<KubeletStandIn>(dir_);
	auto again = kubelet_->next_registration(10s);
	ASSERT_TRUE(again);
	EXPECT_EQ(again->resource_name(), "rebellions.ai/npu");
	// And it serves again on the recreated socket.
	auto plugin = kubelet_->plugin(again->endpoint());
	DeviceStream stream(*plugin);
	auto list = stream.wait_for([](const List &) { return true; }, 10s);
	ASSERT_TRUE(list);
	EXPECT_EQ(list->devices_size(), 2);
}
