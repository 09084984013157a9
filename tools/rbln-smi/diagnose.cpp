#include "diagnose.hpp"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <dlfcn.h>
#include <grp.h>
#include <link.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <fmt/format.h>

#include "rbln/enumerate.hpp"
#include "rbln_drm.h"
#include "tested_kernels.hpp"

namespace fs = std::filesystem;
using nlohmann::json;

namespace rbln::smi {

namespace {

json file_line(const std::string &path)
{
	std::ifstream in(path);
	std::string s;
	if (!in || !std::getline(in, s))
		return nullptr;
	return s;
}

json os_release(const char *key)
{
	std::ifstream in("/etc/os-release");
	for (std::string line; std::getline(in, line);)
		if (line.starts_with(std::string(key) + "=")) {
			std::string v = line.substr(strlen(key) + 1);
			if (v.size() >= 2 && v.front() == '"')
				v = v.substr(1, v.size() - 2);
			return v;
		}
	return nullptr;
}

json command_output(const std::string &cmd)
{
	FILE *p = popen((cmd + " 2>/dev/null").c_str(), "r");
	if (!p)
		return nullptr;
	std::string out;
	char buf[512];
	size_t n;
	while ((n = fread(buf, 1, sizeof(buf), p)) > 0)
		out.append(buf, n);
	if (pclose(p) != 0 && out.empty())
		return nullptr;
	while (!out.empty() && out.back() == '\n')
		out.pop_back();
	return out;
}

json host_section()
{
	utsname u{};
	uname(&u);
	return {{"kernel", u.release}, {"arch", u.machine}, {"distro", os_release("PRETTY_NAME")},
		{"tested_kernels", tested_kernels(u.release)}};
}

json module_section()
{
	bool loaded = fs::exists("/sys/module/rbln");
	json params = nullptr;
	if (loaded) {
		params = json::object();
		std::error_code ec;
		for (const auto &p : fs::directory_iterator("/sys/module/rbln/parameters", ec))
			params[p.path().filename().string()] = file_line(p.path());
	}
	return {{"loaded", loaded},
		{"version", loaded ? file_line("/sys/module/rbln/version") : json(nullptr)},
		{"taint", loaded ? file_line("/sys/module/rbln/taint") : json(nullptr)},
		{"kernel_tainted", file_line("/proc/sys/kernel/tainted")},
		{"parameters", params},
		{"dkms_status", std::system("command -v dkms >/dev/null 2>&1") == 0
					? command_output("dkms status rbln") : json(nullptr)}};
}

json nodes_section(const std::vector<NpuInfo> &npus)
{
	json nodes = json::array();
	for (const auto &n : npus) {
		struct stat st{};
		bool present = ::stat(n.node.c_str(), &st) == 0;
		group *g = present ? getgrgid(st.st_gid) : nullptr;
		std::error_code ec;
		auto link = fs::read_symlink(fmt::format("/dev/rbln{}", n.index), ec);
		nodes.push_back({{"npu", n.index},
				 {"node", n.node},
				 {"present", present},
				 {"mode", present ? json(fmt::format("{:04o}", st.st_mode & 07777)) : json(nullptr)},
				 {"group", g ? json(g->gr_name) : json(nullptr)},
				 {"can_open", present && ::access(n.node.c_str(), R_OK | W_OK) == 0},
				 {"rbln_link", ec ? json(nullptr) : json(link.string())}});
	}
	return nodes;
}

json udev_section()
{
	for (const char *p : {"/etc/udev/rules.d/70-rbln.rules", "/run/udev/rules.d/70-rbln.rules",
			      "/usr/lib/udev/rules.d/70-rbln.rules", "/lib/udev/rules.d/70-rbln.rules"})
		if (fs::exists(p))
			return {{"rules", p}};
	return {{"rules", nullptr}};
}

// Loads a library in a link-map namespace of its own (dlmopen), with its own
// copies of its dependencies: rbln-smi links libdevmgr statically, and the
// shared copy's constructors must not meet the static one's in this
// namespace (both register the profiler's trace messages with libprotobuf,
// which aborts on the second).  The handle, or nullptr with dlerror() set.
void *load_apart(const std::string &path)
{
	return dlmopen(LM_ID_NEWLM, path.c_str(), RTLD_NOW | RTLD_LOCAL);
}

// Where the loader would look for librbln_devmgr.so.0, in its order, and
// which file a dlopen() really gets.
json library_section()
{
	const std::string soname = "librbln_devmgr.so.0";
	json candidates = json::array();
	std::vector<std::string> dirs;
	if (const char *lp = std::getenv("LD_LIBRARY_PATH")) {
		std::stringstream ss(lp);
		for (std::string d; std::getline(ss, d, ':');)
			if (!d.empty())
				dirs.push_back(d);
	}
	json cache = command_output("ldconfig -p | grep " + soname);
	if (cache.is_string()) {
		std::stringstream ss(cache.get<std::string>());
		for (std::string line; std::getline(ss, line);)
			if (auto arrow = line.find("=> "); arrow != std::string::npos)
				dirs.push_back(fs::path(line.substr(arrow + 3)).parent_path());
	}
	for (const char *d : {"/lib", "/usr/lib", "/usr/local/lib"})
		dirs.push_back(d);
	for (const auto &d : dirs) {
		std::string path = d + "/" + soname;
		if (!fs::exists(path))
			continue;
		void *h = load_apart(path);
		candidates.push_back({{"path", path}, {"loadable", h != nullptr},
				      {"error", h ? json(nullptr) : json(dlerror())}});
		if (h)
			dlclose(h);
	}
	json loaded = nullptr;
	if (void *h = load_apart(soname)) {
		link_map *lm = nullptr;
		if (dlinfo(h, RTLD_DI_LINKMAP, &lm) == 0 && lm)
			loaded = lm->l_name;
		dlclose(h);
	}
	return {{"soname", soname}, {"candidates", candidates}, {"loads", loaded}};
}

json abi_section(const std::vector<NpuInfo> &npus, const json &module)
{
	json out = {{"built_against", DRM_RBLN_UAPI_VERSION}, {"driver_version", nullptr},
		    {"driver_compat", nullptr}, {"verdict", nullptr}};
	if (std::getenv("RBLN_SKIP_ABI_CHECK"))
		out["skip_switch"] = std::getenv("RBLN_SKIP_ABI_CHECK");
	if (!module["loaded"].get<bool>()) {
		out["verdict"] = "unknown: the driver is not loaded";
		return out;
	}
	for (const auto &n : npus) {
		try {
			auto dev = Device::open_path(n.node);
			auto v = uint32_t(dev.param(DRM_RBLN_PARAM_UAPI_VERSION));
			auto c = uint32_t(dev.param(DRM_RBLN_PARAM_UAPI_COMPAT_VERSION));
			out["driver_version"] = v;
			out["driver_compat"] = c;
			out["verdict"] = check_abi(DRM_RBLN_UAPI_VERSION, v, c).ok
						 ? "ok" : fmt::format("mismatch: driver accepts {}..{}, built against {}",
								      c, v, DRM_RBLN_UAPI_VERSION);
			return out;
		} catch (const Error &e) {
			out["verdict"] = fmt::format("unknown: {}", e.what());
		}
	}
	if (out["verdict"].is_null())
		out["verdict"] = "unknown: no NPU to ask";
	return out;
}

json environment_section()
{
	json env = json::object();
	for (const char *k : {"RBLN_VISIBLE_DEVICES", "RBLN_DEVICES", "RBLN_NPUS_PER_DEVICE",
			      "RBLN_DEVICE_MAP", "RBLN_SKIP_ABI_CHECK", "RBLN_RECLAIM_STALE",
			      "LD_LIBRARY_PATH"})
		env[k] = std::getenv(k) ? json(std::getenv(k)) : json(nullptr);
	for (char **e = environ; *e; e++) {
		std::string kv = *e;
		if (kv.starts_with("RBLN_"))
			env[kv.substr(0, kv.find('='))] = kv.substr(kv.find('=') + 1);
	}
	return env;
}

json container_section(const std::vector<NpuInfo> &npus)
{
	json hints = json::array();
	// A root that is a subdirectory of some file system: pivot_root into a bundle.
	std::ifstream mi("/proc/self/mountinfo");
	for (std::string line; std::getline(mi, line);) {
		std::istringstream f(line);
		std::string id, parent, devno, root, mountpoint;
		if (f >> id >> parent >> devno >> root >> mountpoint && mountpoint == "/" && root != "/")
			hints.push_back(fmt::format("/ is {} of another file system", root));
	}
	// sysfs shows NPUs whose nodes /dev lacks: NPUs given to a container selectively.
	size_t absent = std::count_if(npus.begin(), npus.end(), [](auto &n) { return !n.node_present; });
	if (absent)
		hints.push_back(fmt::format("{} of {} NPUs in sysfs have no node in /dev", absent, npus.size()));
	if (fs::exists("/.dockerenv"))
		hints.push_back("/.dockerenv");
	if (fs::exists("/run/.containerenv"))
		hints.push_back("/run/.containerenv");
	if (const char *c = std::getenv("container"))
		hints.push_back(fmt::format("container={}", c));
	std::ifstream cg("/proc/1/cgroup");
	for (std::string line; std::getline(cg, line);)
		for (const char *k : {"docker", "kubepods", "containerd", "libpod", "crio"})
			if (line.find(k) != std::string::npos) {
				hints.push_back(fmt::format("/proc/1/cgroup mentions {}", k));
				break;
			}
	return {{"in_container", !hints.empty()}, {"hints", hints}};
}

} // namespace

json diagnose_report()
{
	json module = module_section();
	std::vector<NpuInfo> npus = module["loaded"].get<bool>() ? enumerate_all_npus() : std::vector<NpuInfo>{};
	Plan plan = logical_devices();
	json processes = nullptr;
	for (const auto &n : npus) {
		try {
			for (const auto &c : Device::open_path(n.node).clients()) {
				if (c.self)
					continue;
				if (processes.is_null())
					processes = json::array();
				processes.push_back({{"npu", n.index}, {"pid", c.creator_pid},
						     {"process", c.creator_comm}, {"stale", c.stale},
						     {"acquired", c.acquired}, {"memory", c.device_memory}});
			}
			if (processes.is_null())
				processes = json::array();
		} catch (const Error &) {
			// left null: not readable by this user
		}
	}
	return {{"schema_version", 1},
		{"host", host_section()},
		{"module", module},
		{"device_nodes", nodes_section(npus)},
		{"udev", udev_section()},
		{"library", library_section()},
		{"abi", abi_section(npus, module)},
		{"environment", environment_section()},
		{"grouping", {{"plan", format_plan(plan)}, {"warnings", plan.warnings}}},
		{"container", container_section(npus)},
		{"processes", processes}};
}

std::string diagnose_text(const json &r)
{
	std::string out;
	std::function<void(const json &, const std::string &)> walk = [&](const json &j,
									 const std::string &path) {
		if (j.is_object()) {
			for (auto it = j.begin(); it != j.end(); ++it)
				walk(it.value(), path.empty() ? it.key() : path + "." + it.key());
		} else if (j.is_array() && !j.empty() && (j[0].is_object() || j[0].is_array())) {
			for (size_t i = 0; i < j.size(); i++)
				walk(j[i], fmt::format("{}[{}]", path, i));
		} else {
			std::string v = j.is_string() ? j.get<std::string>() : j.dump();
			if (j.is_null())
				v = "MISSING";
			if (v.find('\n') != std::string::npos) {
				out += path + ":\n";
				std::stringstream ss(v);
				for (std::string line; std::getline(ss, line);)
					out += "    " + line + "\n";
			} else {
				out += fmt::format("{}: {}\n", path, v);
			}
		}
	};
	walk(r, "");
	return out;
}

std::string diagnose_diff(const json &a, const json &b)
{
	json fa = a.flatten(), fb = b.flatten();
	std::string out;
	for (auto it = fa.begin(); it != fa.end(); ++it) {
		if (!fb.contains(it.key()))
			out += fmt::format("{}: {} -> (absent)\n", it.key(), it.value().dump());
		else if (fb[it.key()] != it.value())
			out += fmt::format("{}: {} -> {}\n", it.key(), it.value().dump(), fb[it.key()].dump());
	}
	for (auto it = fb.begin(); it != fb.end(); ++it)
		if (!fa.contains(it.key()))
			out += fmt::format("{}: (absent) -> {}\n", it.key(), it.value().dump());
	return out;
}

} // namespace rbln::smi
