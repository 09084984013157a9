// SPDX-License-Identifier: MIT
#include "oci.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>

#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <rbln/devmgr.hpp>

namespace rbln::ctk {

namespace {

struct Node {
	std::string path;		// in the container
	struct stat st;			// of the host node
};

template <typename Pred>
void remove_if_json(json &array, Pred pred)
{
	json kept = json::array();
	for (const auto &e : array)
		if (!pred(e))
			kept.push_back(e);
	array = std::move(kept);
}

json &env_array(json &config)
{
	json &process = config["process"];
	if (!process.contains("env") || !process["env"].is_array())
		process["env"] = json::array();
	return process["env"];
}

// Each node as a device in the container, and "rw" for it in the device cgroup.
void give_nodes(json &config, const std::vector<Node> &nodes)
{
	json &devices = config["linux"]["devices"];
	json &rules = config["linux"]["resources"]["devices"];
	if (!devices.is_array())
		devices = json::array();
	if (!rules.is_array())
		rules = json::array();
	for (const auto &n : nodes) {
		remove_if_json(devices, [&](const json &d) { return d.value("path", "") == n.path; });
		devices.push_back({{"path", n.path}, {"type", "c"},
				   {"major", major(n.st.st_rdev)}, {"minor", minor(n.st.st_rdev)},
				   {"fileMode", n.st.st_mode & 0777}, {"uid", n.st.st_uid},
				   {"gid", n.st.st_gid}});
		json rule = {{"allow", true}, {"type", "c"}, {"major", major(n.st.st_rdev)},
			     {"minor", minor(n.st.st_rdev)}, {"access", "rw"}};
		if (std::find(rules.begin(), rules.end(), rule) == rules.end())
			rules.push_back(rule);
	}
}

struct stat host_node(const std::string &path, const std::string &what)
{
	struct stat st{};
	int err = ::stat(path.c_str(), &st) != 0 ? errno : S_ISCHR(st.st_mode) ? 0 : ENODEV;
	if (err)
		throw Error(Errc::no_device, err,
			    fmt::format("{}: its node {} is not a character device on this host ({}); "
					"is rbln.ko loaded?", what, path, std::strerror(err)));
	return st;
}

} // namespace

std::optional<std::string> oci_env(const json &config, const std::string &name)
{
	if (!config.contains("process") || !config["process"].contains("env"))
		return std::nullopt;
	std::optional<std::string> value;
	for (const auto &e : config["process"]["env"])
		if (e.is_string() && e.get<std::string>().starts_with(name + "="))
			value = e.get<std::string>().substr(name.size() + 1);	// the last one wins
	return value;
}

void oci_set_env(json &config, const std::string &name, const std::string &value)
{
	json &env = env_array(config);
	remove_if_json(env, [&](const json &e) {
		return e.is_string() && e.get<std::string>().starts_with(name + "=");
	});
	env.push_back(name + "=" + value);
}

std::vector<std::string> oci_cdi_annotations(const json &config)
{
	std::vector<std::string> values;
	if (config.contains("annotations") && config["annotations"].is_object())
		for (const auto &[k, v] : config["annotations"].items())
			if (k.starts_with("cdi.k8s.io/") && v.is_string())
				values.push_back(v.get<std::string>());
	return values;
}

bool oci_privileged(const json &config)
{
	try {
		const auto &bounding = config.at("process").at("capabilities").at("bounding");
		return std::find(bounding.begin(), bounding.end(), "CAP_SYS_ADMIN") != bounding.end();
	} catch (const json::exception &) {
		return false;
	}
}

void oci_give_npus(json &config, const std::vector<NpuInfo> &npus)
{
	std::vector<Node> nodes;
	for (const auto &npu : npus) {
		struct stat st = host_node(npu.node, fmt::format("NPU {}", npu.index));
		nodes.push_back({npu.node, st});
		nodes.push_back({fmt::format("/dev/rbln{}", npu.index), st});
	}
	give_nodes(config, nodes);
}

void oci_set_visible_devices(json &config, const std::vector<NpuInfo> &npus)
{
	std::vector<unsigned> indices;
	for (const auto &npu : npus)
		indices.push_back(npu.index);
	oci_set_env(config, "RBLN_VISIBLE_DEVICES",
		    npus.empty() ? std::string("none") : fmt::format("{}", fmt::join(indices, ",")));
}

} // namespace rbln::ctk

namespace rbln::ctk {

void oci_apply_cdi_edits(json &config, const json &edits, const std::string &where)
{
	for (const char *k : {"intelRdt", "additionalGids", "netDevices"})
		if (edits.contains(k))
			throw Error(Errc::invalid_argument, EINVAL,
				    fmt::format("{}: containerEdits.{} is not supported by rbln-container-runtime",
						where, k));
	std::vector<Node> nodes;
	for (const auto &n : edits.value("deviceNodes", json::array())) {
		std::string path = n.value("path", "");
		nodes.push_back({path, host_node(n.value("hostPath", path), where)});
	}
	give_nodes(config, nodes);
	for (const auto &e : edits.value("env", json::array())) {
		std::string kv = e.get<std::string>();
		size_t eq = kv.find('=');
		oci_set_env(config, kv.substr(0, eq), kv.substr(eq + 1));
	}
	// An engine that applied the CDI device itself (podman, containerd with
	// enable_cdi) may still pass the annotation on: a mount is one per
	// destination (ours replaces one there), a hook is added once.
	for (const auto &m : edits.value("mounts", json::array())) {
		json mount = {{"destination", m.value("containerPath", "")}, {"source", m.value("hostPath", "")},
			      {"type", m.value("type", "bind")},
			      {"options", m.value("options", json::array({"rbind", "ro"}))}};
		json &mounts = config["mounts"];
		if (!mounts.is_array())
			mounts = json::array();
		remove_if_json(mounts, [&](const json &x) { return x.value("destination", "") == mount["destination"]; });
		mounts.push_back(mount);
	}
	for (const auto &h : edits.value("hooks", json::array())) {
		json hook = {{"path", h.value("path", "")}};
		for (const char *k : {"args", "env", "timeout"})
			if (h.contains(k))
				hook[k] = h[k];
		json &list = config["hooks"][h.value("hookName", "")];
		if (!list.is_array())
			list = json::array();
		const bool applied = std::any_of(list.begin(), list.end(), [&](const json &x) {
			return x.value("path", "") == hook["path"] && x.value("args", json::array()) == hook.value("args", json::array());
		});
		if (!applied)
			list.push_back(hook);
	}
}

} // namespace rbln::ctk
