// SPDX-License-Identifier: MIT
// rbln-device-plugin against the real rbln.ko, driven by the kubelet
// stand-in (kubelet_standin.hpp says what it leaves out of a kubelet).
#include <csignal>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>

#include <sys/wait.h>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "cdi.hpp"
#include "child_process.hpp"
#include "kubelet_standin.hpp"
#include "manifest_context.hpp"
#include "rbln/devmgr.hpp"
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
		if (!log_.empty()) {
			if (HasFailure())
				std::cerr << "rbln-device-plugin's log:\n" << log() << "\n";
			fs::remove(log_);
		}
	}

	std::string log() const
	{
		std::ifstream in(log_);
		return {std::istreambuf_iterator<char>(in), {}};
	}

	// Starts the plugin (under @ctx: the manifest's security context) and
	// takes its registrations; its stderr goes to log_.
	std::vector<v1beta1::RegisterRequest> start(const std::string &mode, size_t registrations,
						    const std::optional<ManifestContext> &ctx = std::nullopt,
						    std::vector<std::string> extra = {})
	{
		const std::string bin = build_dir() + "/cmake/tools/rbln-device-plugin/rbln-device-plugin";
		std::vector<std::string> argv = {bin, "--resource-mode", mode, "--kubelet-dir", dir_};
		argv.insert(argv.end(), extra.begin(), extra.end());
		if (ctx)
			argv = under_context(*ctx, argv, {{"/var/lib/kubelet/device-plugins", dir_}});
		log_ = dir_ + ".log";
		pid_ = spawn(argv, log_);
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

	std::string dir_, log_;
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

namespace {

// "CapEff" or "NoNewPrivs" of /proc/PID/status.
std::string proc_status(pid_t pid, const std::string &key)
{
	std::ifstream in(fmt::format("/proc/{}/status", pid));
	for (std::string line; std::getline(in, line);)
		if (line.starts_with(key + ":")) {
			auto v = line.substr(key.size() + 1);
			return v.substr(v.find_first_not_of(" \t"));
		}
	return "missing";
}

std::string reset_npu(unsigned npu)
{
	const char *smi = std::getenv("RBLN_SMI");
	if (!smi)
		return "RBLN_SMI is not set (tests/vm/suite.sh sets it)";
	auto r = run_shell(fmt::format("{} reset -i {} 2>&1", smi, npu));
	return r.exit == 0 ? "" : r.out;
}

} // namespace

// deploy/device-plugin.yaml's security context (root without a capability,
// no new privileges, /dev read-only): the driver's events are refused there
// (CAP_SYS_ADMIN), and health still follows every fault source from sysfs,
// each within 2 s.  Before the sysfs health it exited 1 at once.
TEST_F(DevicePlugin, UnderTheShippedSecurityContextHealthFollowsEveryFault)
{
	const auto ctx = manifest_context("device-plugin.yaml", "device-plugin");
	ASSERT_FALSE(ctx.privileged);
	auto regs = start("npu", 1, ctx);
	ASSERT_EQ(regs.size(), 1u) << log();
	EXPECT_EQ(proc_status(pid_, "CapEff"), ctx.drop_all ? "0000000000000000" : proc_status(getpid(), "CapEff"));
	EXPECT_EQ(proc_status(pid_, "NoNewPrivs"), ctx.no_new_privs ? "1" : "0");
	EXPECT_NE(log().find("driver events not received"), std::string::npos) << log();

	auto plugin = kubelet_->plugin(regs[0].endpoint());
	DeviceStream stream(*plugin);
	const std::string npu1 = uuids_[1];
	ASSERT_TRUE(stream.wait_for([&](const List &l) { return health_of(l, npu1) == "Healthy"; }, 10s));

	auto unhealthy_within_2s = [&](const char *what) {
		const auto t0 = steady_clock::now();
		EXPECT_TRUE(stream.wait_for([&](const List &l) { return health_of(l, npu1) == "Unhealthy"; }, 5s)) << what;
		const auto took = duration_cast<milliseconds>(steady_clock::now() - t0);
		EXPECT_LT(took, 2000ms) << what << ": Unhealthy after " << took.count() << " ms";
		EXPECT_EQ(health_of(*stream.wait_for([](const List &) { return true; }, 1s), uuids_[0]), "Healthy")
			<< "NPU 0 had no fault";
	};

	// Chiplet 2 of the Rebel100 lost: sysfs says so, the plugin follows.
	ASSERT_EQ(write_file("/sys/kernel/debug/rbln/rbln1/chiplet_down", "2 1"), 0);
	unhealthy_within_2s("chiplet 2 lost");
	const auto sysfs = rbln::find_npu("1").sysfs;
	EXPECT_EQ(read_file(sysfs + "/chiplet2/status"), "lost");
	EXPECT_EQ(read_file(sysfs + "/chiplet1/status"), "ok");
	EXPECT_EQ(read_file(sysfs + "/status"), "FAULT");
	EXPECT_NE(log().find("chiplet 2 lost"), std::string::npos) << "the reason is logged:\n" << log();
	ASSERT_EQ(reset_npu(1), "");
	EXPECT_TRUE(stream.wait_for([&](const List &l) { return health_of(l, npu1) == "Healthy"; }, 2s)) << "after reset";
	EXPECT_EQ(read_file(sysfs + "/chiplet2/status"), "ok");

	// A memory error.
	const auto memory_errors = std::stoul(read_file(sysfs + "/memory_errors").value_or("0"));
	ASSERT_EQ(write_file("/sys/kernel/debug/rbln/rbln1/memory_error", "0"), 0);
	unhealthy_within_2s("memory error");
	EXPECT_EQ(std::stoul(read_file(sysfs + "/memory_errors").value_or("0")), memory_errors + 1);
	ASSERT_EQ(reset_npu(1), "");
	EXPECT_TRUE(stream.wait_for([&](const List &l) { return health_of(l, npu1) == "Healthy"; }, 2s)) << "after reset";

	// A hang the driver recovers from (TDR: the job times out, its engine is
	// reset and works again) is counted, and the NPU stays Healthy: it is
	// not a dead device (deploy/README.md, "Health").  The plugin re-reads
	// every 1000 ms meanwhile, so a flip would have been sent.
	auto engine_resets = [&] { return std::stoul(read_file(sysfs + "/engine_resets").value_or("0")); };
	auto hung_job = [&] {
		auto dev = rbln::Device::open(1);
		auto a = dev.allocate(8192, rbln::Placement::on_chiplet(2));
		auto b = dev.allocate(8192, rbln::Placement::on_chiplet(2));
		EXPECT_EQ(write_file("/sys/kernel/debug/rbln/rbln1/hang", "2 neural_dma"), 0);
		auto job = dev.submit(rbln::Engine::neural_dma, 2, {{a, b, 0, 4096, 4096}});
		EXPECT_THROW(job.wait(), rbln::Error) << "the hung job times out";
		EXPECT_EQ(write_file("/sys/kernel/debug/rbln/rbln1/hang", "2 neural_dma 0"), 0);
	};
	const auto resets_before = engine_resets();
	hung_job();
	EXPECT_EQ(engine_resets(), resets_before + 1) << "the TDR is counted";
	EXPECT_EQ(read_file(sysfs + "/status"), "READY");
	EXPECT_FALSE(stream.wait_for([&](const List &l) { return health_of(l, npu1) == "Unhealthy"; }, 2500ms))
		<< "a recovered TDR made the NPU Unhealthy";

	// A TDR whose engine reset fails wedges the NPU (FAULT): Unhealthy within
	// 2 s, Healthy again after a device reset.
	ASSERT_EQ(write_file("/sys/kernel/debug/rbln/rbln1/fail_next_resets", "1"), 0);
	hung_job();
	EXPECT_EQ(engine_resets(), resets_before + 2);
	unhealthy_within_2s("engine reset failed after a timeout");
	EXPECT_EQ(read_file(sysfs + "/status"), "FAULT");
	ASSERT_EQ(reset_npu(1), "");
	EXPECT_TRUE(stream.wait_for([&](const List &l) { return health_of(l, npu1) == "Healthy"; }, 2s)) << "after reset";
}

// RBLN_DISABLE_HEALTHCHECKS=all (NVIDIA's DP_DISABLE_HEALTHCHECKS): a
// faulted NPU stays Healthy; a value it does not know is refused, named.
TEST_F(DevicePlugin, HealthChecksCanBeTurnedOff)
{
	::setenv("RBLN_DISABLE_HEALTHCHECKS", "all", 1);
	auto regs = start("npu", 1);
	::unsetenv("RBLN_DISABLE_HEALTHCHECKS");
	ASSERT_EQ(regs.size(), 1u);
	auto plugin = kubelet_->plugin(regs[0].endpoint());
	DeviceStream stream(*plugin);
	const std::string npu1 = uuids_[1];
	ASSERT_TRUE(stream.wait_for([&](const List &l) { return health_of(l, npu1) == "Healthy"; }, 10s));
	ASSERT_EQ(write_file("/sys/kernel/debug/rbln/rbln1/memory_error", "0"), 0);
	EXPECT_FALSE(stream.wait_for([&](const List &l) { return health_of(l, npu1) == "Unhealthy"; }, 3s));
	EXPECT_NE(log().find("health checks are off"), std::string::npos) << log();
	EXPECT_EQ(reset_npu(1), "");

	const std::string bin = build_dir() + "/cmake/tools/rbln-device-plugin/rbln-device-plugin";
	auto bad = run_shell(fmt::format("RBLN_DISABLE_HEALTHCHECKS=sometimes {} --kubelet-dir {} 2>&1", bin, dir_));
	EXPECT_EQ(bad.exit, 2) << bad.out;
	EXPECT_NE(bad.out.find("RBLN_DISABLE_HEALTHCHECKS='sometimes'"), std::string::npos) << bad.out;
	auto version = run_shell(fmt::format("{} --version", bin));
	EXPECT_EQ(version.exit, 0);
	EXPECT_TRUE(version.out.starts_with("rbln-device-plugin ")) << version.out;
}

// Events the socket had no room for are lost (ENOBUFS): a FAULT among them
// must still be seen.  The plugin (root, so it receives events) is stopped
// while acquisitions flood its socket and a memory error faults NPU 1; let
// go, it logs the loss, re-reads, and marks the NPU Unhealthy.  Before, the
// overflow was ignored and only the next event could have told.
TEST_F(DevicePlugin, LostEventsAreReReadAndSaidSo)
{
	auto regs = start("npu", 1, std::nullopt, {"--health-interval-ms", "600000"});
	ASSERT_EQ(regs.size(), 1u);
	auto plugin = kubelet_->plugin(regs[0].endpoint());
	DeviceStream stream(*plugin);
	const std::string npu1 = uuids_[1];
	ASSERT_TRUE(stream.wait_for([&](const List &l) { return health_of(l, npu1) == "Healthy"; }, 10s));

	ASSERT_EQ(::kill(pid_, SIGSTOP), 0);
	{
		auto dev = rbln::Device::open(0);
		for (int i = 0; i < 2000; i++) {
			dev.acquire();
			dev.release();
		}
	}
	ASSERT_EQ(write_file("/sys/kernel/debug/rbln/rbln1/memory_error", "1"), 0);
	ASSERT_EQ(::kill(pid_, SIGCONT), 0);
	EXPECT_TRUE(stream.wait_for([&](const List &l) { return health_of(l, npu1) == "Unhealthy"; }, 5s));
	EXPECT_NE(log().find("driver events were lost"), std::string::npos) << log();
	EXPECT_EQ(reset_npu(1), "");
}

TEST_F(DevicePlugin, AllocatedCdiNamesResolveInTheGeneratedSpec)
{
	auto regs = start("npu", 1, std::nullopt, {"--device-list-strategy", "cdi-cri,cdi-annotations,envvar"});
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

namespace {

v1beta1::ContainerAllocateResponse allocate(v1beta1::DevicePlugin::Stub &plugin, const std::string &uuid)
{
	grpc::ClientContext ctx;
	v1beta1::AllocateRequest req;
	req.add_container_requests()->add_devices_ids(uuid);
	v1beta1::AllocateResponse resp;
	EXPECT_TRUE(plugin.Allocate(&ctx, req, &resp).ok());
	return resp.container_responses_size() == 1 ? resp.container_responses(0) : v1beta1::ContainerAllocateResponse{};
}

} // namespace

// The default (device-specs,envvar; Debian 12's containerd 1.6 has no CDI):
// NPU 1's two nodes as DeviceSpecs and RBLN_VISIBLE_DEVICES, no CDI name;
// each strategy alone gives its form only; a bad one is refused at start.
TEST_F(DevicePlugin, DeviceListStrategies)
{
	auto regs = start("npu", 1);
	ASSERT_EQ(regs.size(), 1u);
	auto plugin = kubelet_->plugin(regs[0].endpoint());
	const auto npu = rbln::find_npu(uuids_[1]);
	auto r = allocate(*plugin, npu.uuid);
	std::set<std::string> paths;
	for (const auto &d : r.devices()) {
		EXPECT_EQ(d.host_path(), d.container_path());
		EXPECT_EQ(d.permissions(), "rw");
		paths.insert(d.host_path());
	}
	EXPECT_EQ(paths, (std::set<std::string>{"/dev/rbln1", npu.node})) << "/dev/rbln1 and its accel/render node";
	EXPECT_EQ(r.envs().at("RBLN_VISIBLE_DEVICES"), npu.uuid);
	EXPECT_EQ(r.cdi_devices_size(), 0);
	EXPECT_TRUE(r.annotations().empty());
	const int status = terminate(pid_);
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	pid_ = -1;

	for (const std::string strategy : {"cdi-cri", "cdi-annotations", "envvar", "device-specs"}) {
		SCOPED_TRACE(strategy);
		kubelet_.reset();
		kubelet_ = std::make_unique<KubeletStandIn>(dir_);
		regs = start("npu", 1, std::nullopt, {"--device-list-strategy", strategy});
		ASSERT_EQ(regs.size(), 1u);
		r = allocate(*kubelet_->plugin(regs[0].endpoint()), npu.uuid);
		EXPECT_EQ(r.cdi_devices_size(), strategy == "cdi-cri" ? 1 : 0);
		EXPECT_EQ(r.annotations().size(), strategy == "cdi-annotations" ? 1u : 0u);
		EXPECT_EQ(r.envs().size(), strategy == "envvar" ? 1u : 0u);
		EXPECT_EQ(r.devices_size(), strategy == "device-specs" ? 2 : 0);
		const int st = terminate(pid_);
		EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0);
		pid_ = -1;
	}

	const std::string bin = build_dir() + "/cmake/tools/rbln-device-plugin/rbln-device-plugin";
	auto bad = run_shell(fmt::format("{} --kubelet-dir {} --device-list-strategy volume-mounts 2>&1", bin, dir_));
	EXPECT_EQ(bad.exit, 2) << bad.out;
	EXPECT_NE(bad.out.find("'volume-mounts'"), std::string::npos) << bad.out;
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
