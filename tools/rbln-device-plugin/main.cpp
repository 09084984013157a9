// SPDX-License-Identifier: MIT
// rbln-device-plugin: offers the host's NPUs to the kubelet (device-plugin
// API v1beta1), follows their health from the driver's events, registers
// again whenever the kubelet restarts, and stops cleanly on SIGTERM.
//
// Exit codes: libdevmgr's table (rbln/exit_codes.hpp); 0 is a stop by
// SIGTERM/SIGINT.
#include <csignal>
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

int serve(ResourceMode mode, const std::string &dir)
{
	sigset_t stop_signals;
	sigemptyset(&stop_signals);
	sigaddset(&stop_signals, SIGTERM);
	sigaddset(&stop_signals, SIGINT);
	// Blocked before any thread starts, so only sigtimedwait() below sees them.
	pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);

	DeviceTable table(scan_npus());
	HealthWatcher watcher(table);
	std::vector<std::unique_ptr<PluginServer>> servers;
	for (const auto &r : resource_names(mode))
		servers.push_back(std::make_unique<PluginServer>(r, mode, table, dir));

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
	app.footer(rbln::exit_codes_help());
	std::string mode_name = "family", dir = "/var/lib/kubelet/device-plugins";
	app.add_option("--resource-mode", mode_name,
		       "family: rebellions.ai/ATOM and rebellions.ai/REBEL; npu: one rebellions.ai/npu")
		->envname("RBLN_RESOURCE_MODE")
		->capture_default_str();
	app.add_option("--kubelet-dir", dir, "the kubelet's device-plugin directory (kubelet.sock)")
		->capture_default_str();
	try {
		app.parse(argc, argv);
	} catch (const CLI::ParseError &e) {
		return app.exit(e) == 0 ? 0 : int(rbln::ExitCode::bad_argument);
	}
	ResourceMode mode;
	try {
		mode = parse_resource_mode(mode_name);
	} catch (const std::invalid_argument &e) {
		fmt::print(stderr, "rbln-device-plugin: {}\n", e.what());
		return int(rbln::ExitCode::bad_argument);
	}
	try {
		return serve(mode, dir);
	} catch (const std::exception &e) {
		fmt::print(stderr, "rbln-device-plugin: {}\n", e.what());
		return int(rbln::exit_code(e));
	}
}
