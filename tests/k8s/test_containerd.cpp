// SPDX-License-Identifier: MIT
// Debian 12's containerd (1.6, no CDI) as a node runs it: configured by
// `rbln-ctk runtime configure --runtime containerd`, started on that config,
// and running containers with the device plugin's Allocate answer applied as
// the CRI would apply it.  Everything of containerd's (root, state, sockets,
// runc's state, the CRI plugin's CNI directories) is in a directory in /tmp;
// only the shims' sockets and ctr's fifos go to /run/containerd, which
// containerd 1.6 does not let a config move.
//
// ctr, not a kubelet, starts the containers, so two steps of the CRI are done
// here: the rbln runtime's binary is the one containerd's loaded config gives
// it (`containerd config dump`, drop-in merged), and a DeviceSpec's host path
// is resolved to its node first (the CRI does the same; ctr's --device takes
// only a device node and puts it at the same path).
#include <filesystem>
#include <fstream>
#include <iostream>
#include <set>
#include <sstream>
#include <thread>

#include <sys/wait.h>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <gtest/gtest.h>
#include <toml++/toml.h>

#include "child_process.hpp"
#include "container_util.h"
#include "kubelet_standin.hpp"
#include "rbln/enumerate.hpp"
#include "rbln_test_util.h"

namespace fs = std::filesystem;
using namespace std::chrono_literals;
using namespace rbln::test;

namespace {

std::string slurp(const std::string &path)
{
	std::ifstream in(path);
	return {std::istreambuf_iterator<char>(in), {}};
}

class Containerd : public ::testing::Test {
protected:
	static inline std::string dir_, config_, ctr_, log_;
	static inline pid_t containerd_ = -1;
	static inline toml::table loaded_;	// `containerd config dump`
	static constexpr const char *kImage = "localhost/rbln-bare:test";

	static void SetUpTestSuite()
	{
		char tmpl[] = "/tmp/rbln-containerd-XXXXXX";
		dir_ = ::mkdtemp(tmpl);
		config_ = dir_ + "/config.toml";
		log_ = dir_ + "/containerd.log";
		// An operator's config.toml, which rbln-ctk edits.
		std::ofstream(config_) << fmt::format(R"(version = 2
root = "{0}/root"
state = "{0}/state"

[grpc]
address = "{0}/containerd.sock"

[ttrpc]
address = "{0}/containerd-ttrpc.sock"

[plugins."io.containerd.internal.v1.opt"]
path = "{0}/opt"

[plugins."io.containerd.grpc.v1.cri".cni]
bin_dir = "{0}/cni/bin"
conf_dir = "{0}/cni/net.d"
)", dir_);
		const std::string ctk = build_dir() + "/cmake/tools/rbln-ctk";
		auto conf = run_shell(fmt::format("{}/rbln-ctk runtime configure --runtime containerd --config {} "
						  "--runtime-path {}/rbln-container-runtime 2>&1", ctk, config_, ctk));
		ASSERT_EQ(conf.exit, 0) << conf.out;
		ASSERT_TRUE(fs::exists(dir_ + "/conf.d/99-rbln.toml")) << conf.out;

		// The shim's settings: RBLN_VISIBLE_DEVICES is honoured for
		// unprivileged containers, as the RuntimeClass rbln path needs;
		// containerd hands its environment down to the shim.
		std::ofstream(dir_ + "/ctk.yaml") << "runtime: runc\naccept-env-unprivileged: true\n";
		::setenv("RBLN_CTK_CONFIG", (dir_ + "/ctk.yaml").c_str(), 1);
		containerd_ = spawn({"/bin/sh", "-c",
				     fmt::format("exec containerd --config {} >>{} 2>&1 </dev/null", config_, log_)});
		::unsetenv("RBLN_CTK_CONFIG");
		ASSERT_GT(containerd_, 0);
		ctr_ = fmt::format("ctr --address {}/containerd.sock --namespace rbln-test", dir_);
		bool up = false;
		for (int i = 0; i < 300 && !up; i++) {
			up = run_shell(ctr_ + " version >/dev/null 2>&1").exit == 0;
			if (!up)
				std::this_thread::sleep_for(100ms);
		}
		ASSERT_TRUE(up) << "containerd did not serve within 30 s:\n" << slurp(log_);

		auto dump = run_shell(fmt::format("containerd --config {} config dump 2>/dev/null", config_));
		ASSERT_EQ(dump.exit, 0) << dump.out;
		try {
			loaded_ = toml::parse(dump.out);
		} catch (const toml::parse_error &e) {
			FAIL() << "config dump is not TOML: " << e.description() << "\n" << dump.out;
		}

		// The image: the bare root file system (busybox, glibc), through
		// podman into an image archive that ctr imports.
		const std::string podman = isolated_podman(dir_ + "/podman");
		make_bare_rootfs(dir_ + "/rootfs");
		auto image = run_shell(fmt::format("tar -C {0}/rootfs -cf {0}/bare.tar . && {1} import {0}/bare.tar {2} "
						   ">/dev/null && {1} save --format docker-archive -o {0}/image.tar {2} "
						   "&& {3} images import --snapshotter native {0}/image.tar 2>&1",
						   dir_, podman, kImage, ctr_));
		ASSERT_EQ(image.exit, 0) << image.out;
		auto listed = run_shell(ctr_ + " images ls -q 2>&1");
		ASSERT_NE(listed.out.find(kImage), std::string::npos) << listed.out;
	}

	static void TearDownTestSuite()
	{
		if (containerd_ > 0) {
			const int status = terminate(containerd_);
			if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
				std::cerr << "containerd's exit status " << status << "; its log:\n" << slurp(log_);
		}
		if (::testing::UnitTest::GetInstance()->current_test_suite()->Failed())
			std::cerr << "containerd's log:\n" << slurp(log_) << "\n";
		fs::remove_all(dir_);
	}

	// The rbln runtime as containerd loaded it from rbln-ctk's drop-in.
	static toml::node_view<toml::node> rbln_runtime()
	{
		return loaded_["plugins"]["io.containerd.grpc.v1.cri"]["containerd"]["runtimes"]["rbln"];
	}

	// The device plugin's Allocate answer for NPU @index under @strategy
	// (empty: its default), from a plugin registered with a kubelet stand-in.
	static v1beta1::ContainerAllocateResponse allocate(unsigned index, const std::string &strategy)
	{
		const std::string kubelet_dir = dir_ + "/kubelet";
		fs::create_directories(kubelet_dir);
		v1beta1::ContainerAllocateResponse out;
		{
			KubeletStandIn kubelet(kubelet_dir);
			std::vector<std::string> argv = {build_dir() + "/cmake/tools/rbln-device-plugin/rbln-device-plugin",
							 "--resource-mode", "npu", "--kubelet-dir", kubelet_dir};
			if (!strategy.empty())
				argv.insert(argv.end(), {"--device-list-strategy", strategy});
			const pid_t plugin = spawn(argv, dir_ + "/plugin.log");
			EXPECT_GT(plugin, 0);
			auto reg = kubelet.next_registration(30s);
			EXPECT_TRUE(reg) << slurp(dir_ + "/plugin.log");
			if (reg) {
				grpc::ClientContext ctx;
				v1beta1::AllocateRequest req;
				req.add_container_requests()->add_devices_ids(rbln::enumerate_npus().at(index).uuid);
				v1beta1::AllocateResponse resp;
				auto status = kubelet.plugin(reg->endpoint())->Allocate(&ctx, req, &resp);
				EXPECT_TRUE(status.ok()) << status.error_message();
				if (resp.container_responses_size() == 1)
					out = resp.container_responses(0);
			}
			const int st = terminate(plugin);
			EXPECT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << slurp(dir_ + "/plugin.log");
		}
		fs::remove_all(kubelet_dir);
		return out;
	}

	// `ctr run` of @script with @alloc applied: its DeviceSpecs, envs and
	// annotations.  /usr and the build tree are bound in read-only so this
	// tree's rbln-smi runs inside; @runtime_flags choose the runtime.
	static CommandResult run(const v1beta1::ContainerAllocateResponse &alloc, const std::string &runtime_flags,
				 const std::string &script)
	{
		static int next = 0;
		std::string flags;
		std::set<std::string> nodes;
		for (const auto &d : alloc.devices()) {
			std::error_code ec;
			const std::string node = fs::canonical(d.host_path(), ec).string();
			EXPECT_FALSE(ec) << d.host_path() << ": " << ec.message();
			if (nodes.insert(node).second)
				flags += fmt::format(" --device {}", node);
		}
		for (const auto &[k, v] : alloc.envs())
			flags += fmt::format(" --env {}={}", k, v);
		for (const auto &[k, v] : alloc.annotations())
			flags += fmt::format(" --annotation {}={}", k, v);
		for (const std::string &dir : {std::string("/usr"), build_dir()})
			flags += fmt::format(" --mount type=bind,src={0},dst={0},options=rbind:ro", dir);
		return run_shell(fmt::format("{} run --rm --snapshotter native --runc-root {}/runc {}{} {} rbln-test-{} "
					     "/bin/sh -c '{}' 2>&1",
					     ctr_, dir_, runtime_flags, flags, kImage, next++, script));
	}

	// What the container lists: its /dev/rbln* links, whether each NPU's
	// node is there, and rbln-smi's view.
	static std::string npu_script()
	{
		std::string s = "ls /dev | grep ^rbln | tr \"\\n\" \" \"; echo \"|\"; ";
		for (const auto &d : sim_devices())
			s += fmt::format("test -c {0} && echo \"has {0}\" || echo \"no {0}\"; ", d.node);
		return s + fmt::format("{}/cmake/tools/rbln-smi/rbln-smi --query npu,uuid --format csv,noheader; "
				       "echo smi=$?; echo visible=$RBLN_VISIBLE_DEVICES", build_dir());
	}

	// The container saw NPU 1 only: its node, and rbln-smi lists it alone.
	static void expect_only_npu1(const CommandResult &r)
	{
		auto npu0 = sim_device(0), npu1 = sim_device(1);
		ASSERT_TRUE(npu0 && npu1);
		EXPECT_NE(r.out.find("has " + npu1->node), std::string::npos) << r.out;
		EXPECT_NE(r.out.find("no " + npu0->node), std::string::npos) << r.out;
		EXPECT_EQ(r.out.find("rbln0"), std::string::npos) << r.out;
		const std::string uuid1 = read_file(npu1->sysfs + "/uuid").value_or("?");
		const std::string uuid0 = read_file(npu0->sysfs + "/uuid").value_or("?");
		EXPECT_NE(r.out.find("1, " + uuid1 + "\n"), std::string::npos) << r.out;
		EXPECT_EQ(r.out.find(uuid0), std::string::npos) << r.out;
		EXPECT_NE(r.out.find("smi=0"), std::string::npos) << r.out;
	}
};

} // namespace

// containerd 1.6 reads what rbln-ctk wrote: the rbln runtime, the shim as its
// binary, and the annotation allow-list (the CDI keys of 1.7 it ignores); the
// CRI plugin loads, and config.toml's own CRI settings still hold.
TEST_F(Containerd, LoadsTheRuntimeRblnCtkWrote)
{
	const std::string shim = build_dir() + "/cmake/tools/rbln-ctk/rbln-container-runtime";
	EXPECT_EQ(rbln_runtime()["runtime_type"].value_or(std::string()), "io.containerd.runc.v2");
	EXPECT_EQ(rbln_runtime()["options"]["BinaryName"].value_or(std::string()), shim);
	for (const char *k : {"pod_annotations", "container_annotations"})
		EXPECT_EQ(rbln_runtime()[k][0].value_or(std::string()), "cdi.k8s.io/*") << k;
	// It read the drop-in through the import rbln-ctk added to config.toml.
	bool imported = false;
	if (auto *imports = loaded_["imports"].as_array())
		for (const auto &i : *imports)
			imported = imported || i.value_or(std::string()) == dir_ + "/conf.d/99-rbln.toml";
	EXPECT_TRUE(imported) << "containerd did not load " << dir_ << "/conf.d/99-rbln.toml";
	// The operator's settings are still the ones in force.
	EXPECT_EQ(loaded_["root"].value_or(std::string()), dir_ + "/root");
	EXPECT_EQ(loaded_["plugins"]["io.containerd.grpc.v1.cri"]["cni"]["conf_dir"].value_or(std::string()),
		  dir_ + "/cni/net.d");
	// The CRI plugin, which a kubelet talks to, loaded with it.
	auto plugins = run_shell(ctr_ + " plugins ls 2>&1");
	std::string cri_status;
	std::istringstream lines(plugins.out);
	for (std::string l; std::getline(lines, l);) {
		std::istringstream fields(l);
		std::string type, id, platforms, status;
		if (fields >> type >> id >> platforms >> status && type == "io.containerd.grpc.v1" && id == "cri")
			cri_status = status;
	}
	EXPECT_EQ(cri_status, "ok") << plugins.out << "\n" << slurp(log_);
}

// The plugin's default answer (device-specs,envvar) through the rbln runtime:
// the container gets NPU 1's node, the shim adds /dev/rbln1 and names NPU 1
// in RBLN_VISIBLE_DEVICES, and rbln-smi inside lists NPU 1 alone.
TEST_F(Containerd, DefaultAllocateThroughTheRblnRuntimeGivesExactlyItsNpu)
{
	auto alloc = allocate(1, "");
	ASSERT_EQ(alloc.devices_size(), 2);
	ASSERT_EQ(alloc.envs().count("RBLN_VISIBLE_DEVICES"), 1u);
	const std::string shim = rbln_runtime()["options"]["BinaryName"].value_or(std::string());
	ASSERT_FALSE(shim.empty());
	auto r = run(alloc,
		     fmt::format("--runtime {} --runc-binary {}",
				 rbln_runtime()["runtime_type"].value_or(std::string()), shim),
		     npu_script());
	ASSERT_EQ(r.exit, 0) << r.out;
	expect_only_npu1(r);
	EXPECT_NE(r.out.find("rbln1 |"), std::string::npos) << r.out;
	// The shim names the NPUs it gave, by index.
	EXPECT_NE(r.out.find("visible=1\n"), std::string::npos) << r.out;
}

// device-specs alone, plain runc, no CDI spec anywhere and no shim: what a
// pod on containerd 1.6 without the RuntimeClass gets is still its NPU only.
TEST_F(Containerd, DeviceSpecsAloneWithoutCdiOrShimGiveExactlyItsNpu)
{
	for (const char *spec : {"/etc/cdi/rbln.yaml", "/var/run/cdi/rbln.yaml"})
		ASSERT_FALSE(fs::exists(spec)) << spec << " would make this not a test without CDI";
	auto alloc = allocate(1, "device-specs");
	ASSERT_EQ(alloc.devices_size(), 2);
	EXPECT_TRUE(alloc.envs().empty());
	EXPECT_TRUE(alloc.annotations().empty());
	EXPECT_EQ(alloc.cdi_devices_size(), 0);
	auto r = run(alloc, "--runtime io.containerd.runc.v2", npu_script());
	ASSERT_EQ(r.exit, 0) << r.out;
	expect_only_npu1(r);
	EXPECT_NE(r.out.find("visible=\n"), std::string::npos) << r.out;
}

namespace {

// Debian 12's dockerd (20.10, no CDI, no --validate) on the daemon.json that
// `rbln-ctk runtime configure --runtime docker --config` wrote: it loads it
// (runtime rbln), and `docker run --runtime rbln -e RBLN_VISIBLE_DEVICES=1`
// gives the container NPU 1 only.  No network: --bridge none, no iptables;
// everything of dockerd's (data, exec root, socket, pid file) in /tmp.
class Docker : public Containerd {
protected:
	static inline std::string ddir_, docker_, dlog_;
	static inline pid_t dockerd_ = -1;

	static void SetUpTestSuite()
	{
		char tmpl[] = "/tmp/rbln-docker-XXXXXX";
		ddir_ = ::mkdtemp(tmpl);
		dlog_ = ddir_ + "/dockerd.log";
		const std::string config = ddir_ + "/daemon.json";
		std::ofstream(config) << fmt::format(R"({{
    "data-root": "{0}/data",
    "exec-root": "{0}/exec",
    "pidfile": "{0}/docker.pid",
    "hosts": ["unix://{0}/docker.sock"],
    "bridge": "none",
    "iptables": false,
    "ip6tables": false,
    "storage-driver": "vfs",
    "exec-opts": ["native.cgroupdriver=cgroupfs"]
}}
)", ddir_);
		const std::string ctk = build_dir() + "/cmake/tools/rbln-ctk";
		auto conf = run_shell(fmt::format("{}/rbln-ctk runtime configure --runtime docker --config {} "
						  "--runtime-path {}/rbln-container-runtime 2>&1", ctk, config, ctk));
		ASSERT_EQ(conf.exit, 0) << conf.out;

		std::ofstream(ddir_ + "/ctk.yaml") << "runtime: runc\naccept-env-unprivileged: true\n";
		::setenv("RBLN_CTK_CONFIG", (ddir_ + "/ctk.yaml").c_str(), 1);
		dockerd_ = spawn({"/bin/sh", "-c",
				  fmt::format("exec dockerd --config-file {} >>{} 2>&1 </dev/null", config, dlog_)});
		::unsetenv("RBLN_CTK_CONFIG");
		ASSERT_GT(dockerd_, 0);
		docker_ = fmt::format("docker -H unix://{}/docker.sock", ddir_);
		bool up = false;
		for (int i = 0; i < 600 && !up; i++) {
			up = run_shell(docker_ + " version >/dev/null 2>&1").exit == 0;
			if (!up)
				std::this_thread::sleep_for(100ms);
		}
		ASSERT_TRUE(up) << "dockerd did not serve within 60 s:\n" << slurp(dlog_);

		const std::string podman = isolated_podman(ddir_ + "/podman");
		make_bare_rootfs(ddir_ + "/rootfs");
		auto image = run_shell(fmt::format("tar -C {0}/rootfs -cf {0}/bare.tar . && {1} import {0}/bare.tar {2} "
						   ">/dev/null && {1} save --format docker-archive -o {0}/image.tar {2} "
						   "&& {3} load -i {0}/image.tar 2>&1",
						   ddir_, podman, kImage, docker_));
		ASSERT_EQ(image.exit, 0) << image.out;
	}

	static void TearDownTestSuite()
	{
		if (dockerd_ > 0) {
			const int status = terminate(dockerd_);
			if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
				std::cerr << "dockerd's exit status " << status << "\n";
		}
		if (::testing::UnitTest::GetInstance()->current_test_suite()->Failed())
			std::cerr << "dockerd's log:\n" << slurp(dlog_) << "\n";
		run_shell("umount -R " + ddir_ + "/exec " + ddir_ + "/data 2>/dev/null");
		fs::remove_all(ddir_);
	}
};

} // namespace

TEST_F(Docker, LoadsTheRblnRuntimeAndGivesExactlyItsNpu)
{
	const std::string shim = build_dir() + "/cmake/tools/rbln-ctk/rbln-container-runtime";
	auto runtimes = run_shell(docker_ + " info --format '{{json .Runtimes}}' 2>&1");
	ASSERT_EQ(runtimes.exit, 0) << runtimes.out;
	EXPECT_NE(runtimes.out.find(fmt::format("\"rbln\":{{\"path\":\"{}\"", shim)), std::string::npos)
		<< runtimes.out;

	std::string binds;
	for (const std::string &dir : {std::string("/usr"), build_dir()})
		binds += fmt::format(" -v {0}:{0}:ro", dir);
	auto r = run_shell(fmt::format("{} run --rm --runtime rbln --network none -e RBLN_VISIBLE_DEVICES=1{} {} "
				       "/bin/sh -c '{}' 2>&1",
				       docker_, binds, kImage, npu_script()));
	ASSERT_EQ(r.exit, 0) << r.out;
	expect_only_npu1(r);
	EXPECT_NE(r.out.find("rbln1 |"), std::string::npos) << r.out;
	EXPECT_NE(r.out.find("visible=1\n"), std::string::npos) << r.out;
}
