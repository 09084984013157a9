// SPDX-License-Identifier: MIT
// rbln-exporter: Prometheus metrics of the host's NPUs, read from sysfs at
// each scrape (no device node is opened), with the pod each NPU is given to
// where the kubelet's pod-resources socket exists.  /health answers while
// the exporter serves (liveness probes).
//
// Exit codes: libdevmgr's table (rbln/exit_codes.hpp); 0 is a stop by
// SIGTERM/SIGINT, 1 an address it cannot listen on.
#include <csignal>
#include <map>
#include <memory>
#include <mutex>

#include <sys/resource.h>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <prometheus/collectable.h>
#include <prometheus/exposer.h>

#include "metrics.hpp"
#include "rbln/enumerate.hpp"
#include "rbln/exit_codes.hpp"
#include "pod_resources.hpp"

using namespace rbln::exporter;

namespace {

class NpuCollector : public prometheus::Collectable {
public:
	explicit NpuCollector(std::string pod_socket) : pod_socket_(std::move(pod_socket)) {}

	std::vector<prometheus::MetricFamily> Collect() const override
	{
		auto npus = sample_npus();
		const auto pods = pods_by_device(pod_socket_);
		for (auto &n : npus)
			if (auto p = pods.find(n.uuid); p != pods.end())
				n.pod = p->second;
		std::lock_guard lock(mutex_);
		for (const auto &n : npus)
			if (n.error) {
				errors_[n.index]++;
				fmt::print(stderr, "rbln-exporter: NPU {}: {}\n", n.index, *n.error);
			}
		return to_metric_families(npus, errors_);
	}

private:
	std::string pod_socket_;
	mutable std::mutex mutex_;
	mutable std::map<unsigned, uint64_t> errors_;	// failed reads by NPU, since start
};

// /health: answers while the exporter serves; says whether the driver is there.
class HealthCollector : public prometheus::Collectable {
public:
	std::vector<prometheus::MetricFamily> Collect() const override
	{
		prometheus::ClientMetric m;
		m.gauge.value = rbln::driver_loaded() ? 1 : 0;
		return {{"rbln_exporter_driver_loaded", "1 when rbln.ko is loaded.", prometheus::MetricType::Gauge, {m}}};
	}
};

} // namespace

int main(int argc, char **argv)
{
	CLI::App app{"rbln-exporter: Prometheus metrics of RBLN NPUs on /metrics.\n"
		     "Stops cleanly (exit 0) on SIGTERM or SIGINT; an address it cannot listen on is 1."};
	app.footer(rbln::exit_codes_help());
	std::string listen = "0.0.0.0:9400", pod_socket = kPodResourcesSocket;
	app.add_option("--listen", listen, "ADDRESS:PORT to serve /metrics on")->capture_default_str();
	app.add_option("--pod-resources-socket", pod_socket,
		       "the kubelet's pod-resources socket (pod labels when it exists)")
		->capture_default_str();
	app.set_version_flag("--version", std::string("rbln-exporter ") + RBLN_TOOL_VERSION);
	try {
		app.parse(argc, argv);
	} catch (const CLI::ParseError &e) {
		return app.exit(e) == 0 ? 0 : int(rbln::ExitCode::bad_argument);
	}

	// Each NPU's attributes stay open between scrapes (one pread per figure):
	// about 15 per ATOM, 35 per Rebel100, so take the hard limit.
	if (rlimit nofile; ::getrlimit(RLIMIT_NOFILE, &nofile) == 0 && nofile.rlim_cur < nofile.rlim_max) {
		nofile.rlim_cur = nofile.rlim_max;
		::setrlimit(RLIMIT_NOFILE, &nofile);
	}

	sigset_t stop;
	sigemptyset(&stop);
	sigaddset(&stop, SIGTERM);
	sigaddset(&stop, SIGINT);
	// Blocked before the server's threads start, so only sigwait() below sees them.
	pthread_sigmask(SIG_BLOCK, &stop, nullptr);

	std::unique_ptr<prometheus::Exposer> exposer;
	try {
		exposer = std::make_unique<prometheus::Exposer>(listen);
	} catch (const std::exception &e) {
		fmt::print(stderr, "rbln-exporter: cannot listen on '{}' (want ADDRESS:PORT, e.g. 0.0.0.0:9400): {}\n",
			   listen, e.what());
		return int(rbln::ExitCode::error);
	}
	auto collector = std::make_shared<NpuCollector>(pod_socket);
	exposer->RegisterCollectable(collector);
	auto health = std::make_shared<HealthCollector>();
	exposer->RegisterCollectable(health, "/health");
	fmt::print("rbln-exporter: serving /metrics and /health on {}\n", listen);
	std::fflush(stdout);

	int sig = 0;
	sigwait(&stop, &sig);
	fmt::print("rbln-exporter: {}, stopping\n", sig == SIGTERM ? "SIGTERM" : "SIGINT");
	return 0;
}
