// SPDX-License-Identifier: MIT
// rbln-exporter against the real rbln.ko: scraped by a real Prometheus
// server on loopback, its stored values are rbln-smi's; promtool finds the
// exposition clean; a pod-resources stand-in gives the pod labels.
#include <algorithm>
#include <filesystem>
#include <functional>
#include <fstream>
#include <thread>

#include <sys/wait.h>

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "child_process.hpp"
#include "manifest_context.hpp"
#include "pod_resources_standin.hpp"
#include "rbln/devmgr.hpp"
#include "rbln_test_util.h"

namespace fs = std::filesystem;
using json = nlohmann::json;
using namespace std::chrono_literals;
using namespace rbln::test;

namespace {

constexpr const char *kExporter = "127.0.0.1:19400";
constexpr const char *kPrometheus = "127.0.0.1:19090";

class Exporter : public ::testing::Test {
protected:
	void SetUp() override
	{
		char tmpl[] = "/tmp/rbln-exp-XXXXXX";
		dir_ = ::mkdtemp(tmpl);
	}
	void TearDown() override
	{
		if (exporter_ > 0) {
			const int status = terminate(exporter_);
			EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "exit status " << status;
		}
		fs::remove_all(dir_);
	}

	// Starts the exporter (under @ctx: a manifest's security context, its
	// pod-resources mount being the directory of @pod_socket); its /metrics
	// once it answers.
	std::string start(const std::string &pod_socket, const std::optional<ManifestContext> &ctx = std::nullopt)
	{
		std::vector<std::string> argv = {build_dir() + "/cmake/tools/rbln-exporter/rbln-exporter", "--listen",
						 kExporter, "--pod-resources-socket", pod_socket};
		if (ctx)
			argv = under_context(*ctx, argv,
					     {{"/var/lib/kubelet/pod-resources", fs::path(pod_socket).parent_path()}});
		exporter_ = spawn(argv);
		EXPECT_GT(exporter_, 0);
		for (int i = 0; i < 100; i++) {
			auto r = scrape();
			if (r.exit == 0)
				return r.out;
			std::this_thread::sleep_for(100ms);
		}
		ADD_FAILURE() << "the exporter did not answer on " << kExporter;
		return {};
	}

	static CommandResult scrape() { return run_shell(fmt::format("curl -sf http://{}/metrics", kExporter)); }

	std::string dir_;
	pid_t exporter_ = -1;
};

// Prometheus' stored values of the rbln_ series now, by "name npu chiplet engine".
using Stored = std::map<std::string, double>;

std::string key(const std::string &metric, unsigned npu, const std::string &chiplet = "", const std::string &engine = "")
{
	return fmt::format("{} {} {} {}", metric, npu, chiplet, engine);
}

Stored stored()
{
	Stored out;
	auto r = run_shell(fmt::format("curl -sf 'http://{}/api/v1/query' --data-urlencode 'query={{__name__=~\"rbln_.*\"}}'",
				       kPrometheus));
	auto j = json::parse(r.out, nullptr, false);
	if (r.exit != 0 || j.is_discarded())
		return out;
	for (const auto &s : j["data"]["result"]) {
		const auto &m = s["metric"];
		out[key(m["__name__"], std::stoul(m["npu"].get<std::string>()), m.value("chiplet", ""),
			m.value("engine", ""))] = std::stod(s["value"][1].get<std::string>());
	}
	return out;
}

// The series lines of @metric in an exposition.
std::vector<std::string> series(const std::string &text, const std::string &metric)
{
	std::vector<std::string> out;
	std::istringstream in(text);
	for (std::string line; std::getline(in, line);)
		if (line.starts_with(metric + "{"))
			out.push_back(line);
	return out;
}

} // namespace

// Run as deploy/exporter.yaml runs it (no privilege, no capability, its
// mounts read-only).
TEST_F(Exporter, PrometheusStoresWhatRblnSmiShows)
{
	const auto ctx = manifest_context("exporter.yaml", "exporter");
	EXPECT_FALSE(ctx.privileged) << "the exporter opens no device node: it needs no privilege";
	const auto text = start(dir_ + "/no-kubelet.sock", ctx);
	ASSERT_FALSE(text.empty());
	std::ofstream(dir_ + "/metrics.txt") << text;
	auto lint = run_shell(fmt::format("promtool check metrics < {}/metrics.txt 2>&1", dir_));
	EXPECT_EQ(lint.exit, 0) << lint.out;
	EXPECT_EQ(lint.out, "") << "promtool has remarks";
	for (const char *m : {"rbln_npu_temperature", "rbln_npu_power", "rbln_npu_memory_used", "rbln_npu_memory_total",
			      "rbln_npu_utilization", "rbln_npu_health", "rbln_npu_chiplet_memory_used",
			      "rbln_npu_engine_busy_seconds_total", "rbln_npu_up", "rbln_npu_faults_total",
			      "rbln_npu_memory_errors_total", "rbln_npu_engine_resets_total", "rbln_npu_chiplet_up"})
		EXPECT_FALSE(series(text, m).empty()) << m << " missing from:\n" << text;

	// Memory held on NPU 1's chiplet 1 while Prometheus scrapes.
	auto dev = rbln::Device::open(1);
	auto held = dev.allocate(4 << 20, rbln::Placement::on_chiplet(1), rbln::AllocMode::eager);

	std::ofstream(dir_ + "/prometheus.yml") << fmt::format(
		"global:\n  scrape_interval: 1s\n"
		"scrape_configs:\n  - job_name: rbln\n    static_configs:\n      - targets: ['{}']\n", kExporter);
	const pid_t prometheus = spawn({"/usr/bin/prometheus", "--config.file=" + dir_ + "/prometheus.yml",
					"--storage.tsdb.path=" + dir_ + "/tsdb", "--web.listen-address=" + std::string(kPrometheus),
					"--log.level=warn"});
	ASSERT_GT(prometheus, 0);
	const double held_bytes = double(dev.status().memory_used);
	ASSERT_GE(held_bytes, double(4 << 20));
	Stored values;
	for (int i = 0; i < 240 && values[key("rbln_npu_memory_used", 1)] != held_bytes; i++) {
		std::this_thread::sleep_for(500ms);
		values = stored();
	}
	ASSERT_EQ(values[key("rbln_npu_memory_used", 1)], held_bytes) << "Prometheus never stored NPU 1's memory";

	// The same moment as rbln-smi sees it (idle NPUs: the figures hold still).
	const char *smi = std::getenv("RBLN_SMI");
	ASSERT_NE(smi, nullptr);
	auto smi_out = run_shell(fmt::format("{} -j", smi));
	ASSERT_EQ(smi_out.exit, 0);
	auto doc = json::parse(smi_out.out);
	ASSERT_EQ(doc["devices"].size(), 2u);
	for (const auto &d : doc["devices"]) {
		const unsigned npu = d["npu"];
		SCOPED_TRACE(fmt::format("NPU {}", npu));
		EXPECT_EQ(values.at(key("rbln_npu_temperature", npu)), d["temperature_c"].get<double>());
		EXPECT_NEAR(values.at(key("rbln_npu_power", npu)), d["power_w"].get<double>(), 1e-6);
		EXPECT_EQ(values.at(key("rbln_npu_utilization", npu)), d["utilization_percent"].get<double>());
		EXPECT_EQ(values.at(key("rbln_npu_memory_used", npu)), d["memory"]["used"].get<double>());
		EXPECT_EQ(values.at(key("rbln_npu_memory_total", npu)), d["memory"]["total"].get<double>());
		EXPECT_EQ(values.at(key("rbln_npu_health", npu)), d["status"] == "FAULT" ? 0.0 : 1.0);
		EXPECT_EQ(values.at(key("rbln_npu_up", npu)), 1.0);
		for (const auto &c : d["chiplets"]) {
			const auto chiplet = std::to_string(c["index"].get<unsigned>());
			EXPECT_EQ(values.at(key("rbln_npu_chiplet_memory_used", npu, chiplet)),
				  c["memory"]["used"].get<double>());
			EXPECT_EQ(values.at(key("rbln_npu_chiplet_memory_total", npu, chiplet)),
				  c["memory"]["total"].get<double>());
			for (auto [engine, ns] : c["engine_busy_ns"].items())
				EXPECT_EQ(values.at(key("rbln_npu_engine_busy_seconds_total", npu, chiplet, engine)),
					  ns.get<double>() / 1e9) << engine;
		}
	}
	const int status = terminate(prometheus);
	EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "prometheus exit status " << status;
}

TEST_F(Exporter, PodResourcesGivePodLabels)
{
	const auto npu0 = rbln::Device::open(0).info().uuid, npu1 = rbln::Device::open(1).info().uuid;
	v1::ListPodResourcesResponse pods;
	auto *pod = pods.add_pod_resources();
	pod->set_name("trainer-0");
	pod->set_namespace_("ml");
	auto *c = pod->add_containers();
	c->set_name("main");
	auto *d = c->add_devices();
	d->set_resource_name("rebellions.ai/REBEL");
	d->add_device_ids(npu1);
	// Another vendor's devices with the NPUs' ids must not count: NPU 0 is
	// nobody's, NPU 1 stays main's.
	auto *other = pod->add_containers();
	other->set_name("sidecar");
	auto *g = other->add_devices();
	g->set_resource_name("example.com/gpu");
	g->add_device_ids(npu0);
	g->add_device_ids(npu1);
	PodResourcesStandIn kubelet(dir_ + "/kubelet.sock", pods);

	const auto text = start(dir_ + "/kubelet.sock");
	auto lines = series(text, "rbln_npu_temperature");
	ASSERT_EQ(lines.size(), 2u) << text;
	for (const auto &l : lines) {
		if (l.find(npu1) != std::string::npos) {
			EXPECT_NE(l.find("pod=\"trainer-0\""), std::string::npos) << l;
			EXPECT_NE(l.find("namespace=\"ml\""), std::string::npos) << l;
			EXPECT_NE(l.find("container=\"main\""), std::string::npos) << l;
		} else {
			EXPECT_NE(l.find(npu0), std::string::npos) << l;
			EXPECT_EQ(l.find("pod="), std::string::npos) << l;
		}
	}
}

namespace {

// The value of the series of @metric whose labels contain every one of @has.
std::optional<double> value_of(const std::string &text, const std::string &metric,
			       const std::vector<std::string> &has = {})
{
	for (const auto &line : series(text, metric))
		if (std::ranges::all_of(has, [&](const auto &h) { return line.find(h) != std::string::npos; }))
			return std::stod(line.substr(line.rfind(' ') + 1));
	return std::nullopt;
}

std::string reset_npu(unsigned npu)
{
	const char *smi = std::getenv("RBLN_SMI");
	if (!smi)
		return "RBLN_SMI is not set";
	auto r = run_shell(fmt::format("{} reset -i {} 2>&1", smi, npu));
	return r.exit == 0 ? "" : r.out;
}

} // namespace

// A lost chiplet, a memory error and a hung engine's reset, each on
// /metrics within 2 s (health and counters), and reset back to health.
TEST_F(Exporter, FaultsAndCountersWithin2s)
{
	ASSERT_FALSE(start(dir_ + "/no-kubelet.sock", manifest_context("exporter.yaml", "exporter")).empty());
	const std::vector<std::string> npu1 = {"npu=\"1\""}, chiplet2 = {"npu=\"1\"", "chiplet=\"2\""};
	auto within_2s = [&](const std::function<bool(const std::string &)> &done) {
		const auto t0 = std::chrono::steady_clock::now();
		while (std::chrono::steady_clock::now() - t0 < 2s) {
			auto r = scrape();
			if (r.exit == 0 && done(r.out))
				return true;
			std::this_thread::sleep_for(100ms);
		}
		return false;
	};
	auto first = scrape().out;
	ASSERT_EQ(value_of(first, "rbln_npu_health", npu1), 1.0) << first;
	ASSERT_EQ(value_of(first, "rbln_npu_chiplet_up", chiplet2), 1.0) << first;
	const double faults = value_of(first, "rbln_npu_faults_total", npu1).value_or(-1);
	const double memory_errors = value_of(first, "rbln_npu_memory_errors_total", npu1).value_or(-1);
	const double resets = value_of(first, "rbln_npu_engine_resets_total", npu1).value_or(-1);
	ASSERT_GE(faults, 0);

	ASSERT_EQ(write_file("/sys/kernel/debug/rbln/rbln1/chiplet_down", "2 1"), 0);
	EXPECT_TRUE(within_2s([&](const std::string &t) {
		return value_of(t, "rbln_npu_chiplet_up", chiplet2) == 0.0 && value_of(t, "rbln_npu_health", npu1) == 0.0 &&
		       value_of(t, "rbln_npu_faults_total", npu1) == faults + 1;
	})) << scrape().out;
	ASSERT_EQ(reset_npu(1), "");
	EXPECT_TRUE(within_2s([&](const std::string &t) {
		return value_of(t, "rbln_npu_chiplet_up", chiplet2) == 1.0 && value_of(t, "rbln_npu_health", npu1) == 1.0;
	})) << "after reset:\n" << scrape().out;

	ASSERT_EQ(write_file("/sys/kernel/debug/rbln/rbln1/memory_error", "3"), 0);
	EXPECT_TRUE(within_2s([&](const std::string &t) {
		return value_of(t, "rbln_npu_memory_errors_total", npu1) == memory_errors + 1 &&
		       value_of(t, "rbln_npu_health", npu1) == 0.0 && value_of(t, "rbln_npu_faults_total", npu1) == faults + 2;
	})) << scrape().out;
	ASSERT_EQ(reset_npu(1), "");

	// A job on a hung engine times out; the engine is reset: counted, and
	// the NPU stays healthy.
	{
		auto dev = rbln::Device::open(1);
		auto a = dev.allocate(8192, rbln::Placement::on_chiplet(2));
		auto b = dev.allocate(8192, rbln::Placement::on_chiplet(2));
		ASSERT_EQ(write_file("/sys/kernel/debug/rbln/rbln1/hang", "2 neural_dma"), 0);
		auto job = dev.submit(rbln::Engine::neural_dma, 2, {{a, b, 0, 4096, 4096}});
		EXPECT_THROW(job.wait(), rbln::Error);
		ASSERT_EQ(write_file("/sys/kernel/debug/rbln/rbln1/hang", "2 neural_dma 0"), 0);
	}
	EXPECT_TRUE(within_2s([&](const std::string &t) {
		return value_of(t, "rbln_npu_engine_resets_total", npu1) == resets + 1 &&
		       value_of(t, "rbln_npu_chiplet_engine_resets_total", chiplet2) >= 1 &&
		       value_of(t, "rbln_npu_health", npu1) == 1.0;
	})) << scrape().out;
}

// As nobody, outside group rbln: no node could be opened, and every NPU is
// still up with its figures (before, the exporter opened each node and such
// an NPU vanished from /metrics).  /health and --version answer.
TEST_F(Exporter, NeedsNoDeviceAccess)
{
	ManifestContext nobody;
	nobody.file = "(test)";
	nobody.run_as_user = 65534;
	nobody.run_as_group = 65534;
	nobody.no_new_privs = nobody.drop_all = true;
	const auto text = start(dir_ + "/no-kubelet.sock", nobody);
	for (unsigned npu : {0u, 1u}) {
		const std::vector<std::string> l = {fmt::format("npu=\"{}\"", npu)};
		EXPECT_EQ(value_of(text, "rbln_npu_up", l), 1.0) << text;
		EXPECT_TRUE(value_of(text, "rbln_npu_memory_total", l).value_or(0) > 0) << text;
	}
	EXPECT_EQ(value_of(text, "rbln_exporter_scrape_errors_total"), std::nullopt) << "no failed read";
	auto health = run_shell(fmt::format("curl -sf http://{}/health", kExporter));
	EXPECT_EQ(health.exit, 0);
	EXPECT_NE(health.out.find("rbln_exporter_driver_loaded 1"), std::string::npos) << health.out;
	auto version = run_shell(build_dir() + "/cmake/tools/rbln-exporter/rbln-exporter --version");
	EXPECT_EQ(version.exit, 0);
	EXPECT_TRUE(version.out.starts_with("rbln-exporter ")) << version.out;
}
