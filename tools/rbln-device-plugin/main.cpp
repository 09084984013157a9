// SPDX-License-Identifier: MIT
// rbln-device-plugin: offers the host's NPUs to the kubelet (device-plugin
// API v1beta1), follows their health (sysfs, re-read periodically and after
// the driver's events where it may receive them), registers
// again whenever the kubelet restarts, and stops cleanly on SIGTERM.
//
// Exit codes: libdevmgr's table (rbln/exit_codes.hpp); 0 is a stop by
// SIGTERM/SIGINT.
#include <csignal>
#include <cstdlib>
#include <cstdio>
#include <ctime>
#include <memory>
#include <vector>

#include <sys/stat.h>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "health_watcher.hpp"
#include "plugin_server.hpp"
#include "rbln/devmgr.hpp"
#include "rbln/exit_codes.hpp"

using namespace rbln::k8s;

namespace {

// What identifies one life of the kubelet: its socket's inode and change time.
struct SocketId {
	ino_t inode = 0;
	long ctime_ns = 0;
	bool operator==(const SocketId &) const = default;
};

std::optional<SocketId> socket_id(const std::string &path)
{
	struct stat st;
	if (::stat(path.c_str(), &st) != 0 || !S_ISSOCK(st.st_mode))
		return std::nullopt;
	return SocketId{st.st_ino, st.st_ctim.tv_sec * 1000000000L + st.st_ctim.tv_nsec};
}

int serve(ResourceMode mode, const std::string &dir, HealthOptions health, ListStrategies strategies)
{
	sigset_t stop_signals;
	sigemptyset(&stop_signals);
	sigaddset(&stop_signals, SIGTERM);
	sigaddset(&stop_signals, SIGINT);
	// Blocked before any thread starts, so only sigtimedwait() below sees them.
	pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

	DeviceTable table(std::vector<Npu>{});
	HealthWatcher watcher(table, health);
	std::vector<std::unique_ptr<PluginServer>> servers;
	for (const auto &r : resource_names(mode))
		servers.push_back(std::make_unique<PluginServer>(r, mode, table, dir, strategies));

	const std::string kubelet = dir + "/" + kKubeletSocket;
	std::optional<SocketId> registered;
	for (;;) {
		auto now = socket_id(kubelet);
		bool lost = std::ranges::any_of(servers, [](auto &s) { return !s->socket_present(); });
		if (now && (now != registered || lost)) {
			try {
				for (auto &s : servers) {
					if (!s->socket_present())
						s->start();
					s->register_with_kubelet();
					fmt::print("rbln-device-plugin: {} registered with {}\n", s->resource(), kubelet);
				}
				registered = now;
			} catch (const std::exception &e) {
				// Tried again on the next tick: a starting kubelet may not answer yet.
				fmt::print(stderr, "rbln-device-plugin: {}\n", e.what());
			}
		}
		std::fflush(stdout);
		timespec tick{1, 0};
		int sig = sigtimedwait(&stop_signals, nullptr, &tick);
		if (sig > 0) {
			fmt::print("rbln-device-plugin: {}, stopping\n", sig == SIGTERM ? "SIGTERM" : "SIGINT");
			break;
		}
	}
	for (auto &s : servers)
		s->stop();
	return 0;
}

} // namespace

int main(int argc, char **argv)
{
	CLI::App app{"rbln-device-plugin: offers RBLN NPUs to the kubelet (device-plugin API v1beta1).\n"
		     "Stops cleanly (exit 0) on SIGTERM or SIGINT."};
	app.footer("Health: an NPU is Unhealthy while its sysfs status is FAULT, FINISH or INIT or a chiplet "
		   "is lost, Healthy again after a reset. A hang the driver recovered from (TDR: the job "
		   "timed out, its engine was reset and works) keeps it Healthy: only that job failed; it "
		   "is counted in sysfs engine_resets (and by rbln-exporter). A TDR whose engine reset "
		   "failed faults the NPU: Unhealthy. See deploy/README.md.\n\n" +
		   rbln::exit_codes_help());
	std::string mode_name = "family", dir = "/var/lib/kubelet/device-plugins";
	app.add_option("--resource-mode", mode_name,
		       "family: rebellions.ai/ATOM and rebellions.ai/REBEL; npu: one rebellions.ai/npu")
		->envname("RBLN_RESOURCE_MODE")
		->capture_default_str();
	app.add_option("--kubelet-dir", dir, "the kubelet's device-plugin directory (kubelet.sock)")
		->capture_default_str();
	std::string strategies_text = kDefaultListStrategies;
	app.add_option("--device-list-strategy", strategies_text,
		       "how Allocate names the NPUs, comma-separated: device-specs (DeviceSpecs of the nodes; any "
		       "runtime, containerd 1.6 included), envvar (RBLN_VISIBLE_DEVICES, for the rbln runtime), "
		       "cdi-cri (CDIDevices: containerd >= 1.7 with enable_cdi, CRI-O >= 1.23, kubelet >= 1.28), "
		       "cdi-annotations (the CDI annotation, for the rbln runtime or CDI-aware engines)")
		->envname("RBLN_DEVICE_LIST_STRATEGY")
		->capture_default_str();
	bool no_checks = false;
	app.add_flag("--disable-health-checks", no_checks,
		     "offer every NPU Healthy whatever its status (also RBLN_DISABLE_HEALTHCHECKS=all)");
	unsigned interval_ms = 1000;
	app.add_option("--health-interval-ms", interval_ms, "how often every NPU's health is re-read from sysfs")
		->check(CLI::Range(50u, 600000u))
		->capture_default_str();
	app.set_version_flag("--version", std::string("rbln-device-plugin ") + RBLN_TOOL_VERSION);
	try {
		app.parse(argc, argv);
	} catch (const CLI::ParseError &e) {
		return app.exit(e) == 0 ? 0 : int(rbln::ExitCode::bad_argument);
	}
	try {
		if (const char *env = std::getenv("RBLN_DISABLE_HEALTHCHECKS"))
			no_checks = no_checks || health_checks_disabled_by(env);
	} catch (const std::invalid_argument &e) {
		fmt::print(stderr, "rbln-device-plugin: {}\n", e.what());
		return int(rbln::ExitCode::bad_argument);
	}
	ResourceMode mode;
	ListStrategies strategies;
	try {
		mode = parse_resource_mode(mode_name);
		strategies = parse_list_strategies(strategies_text);
	} catch (const std::invalid_argument &e) {
		fmt::print(stderr, "rbln-device-plugin: {}\n", e.what());
		return int(rbln::ExitCode::bad_argument);
	}
	try {
		return serve(mode, dir, {!no_checks, std::chrono::milliseconds(interval_ms)}, strategies);
	} catch (const std::exception &e) {
		fmt::print(stderr, "rbln-device-plugin: {}\n", e.what());
		return int(rbln::exit_code(e));
	}
}
