// SPDX-License-Identifier: MIT
#include "cdi.hpp"
#include "text.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <stdexcept>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <yaml-cpp/yaml.h>

#include <rbln/devmgr.hpp>

namespace rbln::ctk {

namespace fs = std::filesystem;

namespace {

json device(const std::string &name, const std::vector<NpuInfo> &npus)
{
	json nodes = json::array();
	for (const auto &n : npus) {
		nodes.push_back({{"path", n.node}, {"permissions", "rw"}});
		nodes.push_back({{"path", fmt::format("/dev/rbln{}", n.index)}, {"hostPath", n.node},
				 {"permissions", "rw"}});
	}
	return {{"name", name}, {"containerEdits", {{"deviceNodes", nodes}}}};
}

// Semantic version "0.5.0" as a comparable number.
int version_number(const std::string &v)
{
	static const std::regex semver(R"(^(\d+)\.(\d+)\.(\d+)$)");
	std::smatch m;
	if (!std::regex_match(v, m, semver))
		return -1;
	return std::stoi(m[1]) * 10000 + std::stoi(m[2]) * 100 + std::stoi(m[3]);
}

bool uses_host_path(const json &edits)
{
	if (!edits.is_object() || !edits.contains("deviceNodes") || !edits["deviceNodes"].is_array())
		return false;
	for (const auto &n : edits["deviceNodes"])
		if (n.is_object() && n.contains("hostPath"))
			return true;
	return false;
}

bool uses_key(const json &edits, const char *key)
{
	return edits.is_object() && edits.contains(key);
}

// Strings that YAML would read back as another type are quoted ("0", "true").
void emit(YAML::Emitter &out, const json &j)
{
	static const std::regex plain_unsafe(R"(^([-+]?[0-9.]+|true|false|yes|no|on|off|null|~|)$)",
					     std::regex::icase);
	switch (j.type()) {
	case json::value_t::object:
		out << YAML::BeginMap;
		for (const auto &[k, v] : j.items()) {
			out << YAML::Key << k << YAML::Value;
			emit(out, v);
		}
		out << YAML::EndMap;
		break;
	case json::value_t::array:
		out << YAML::BeginSeq;
		for (const auto &v : j)
			emit(out, v);
		out << YAML::EndSeq;
		break;
	case json::value_t::string: {
		const auto &s = j.get_ref<const std::string &>();
		if (std::regex_match(s, plain_unsafe))
			out << YAML::DoubleQuoted;
		out << s;
		break;
	}
	case json::value_t::boolean:
		out << j.get<bool>();
		break;
	case json::value_t::number_unsigned:
		out << j.get<uint64_t>();
		break;
	case json::value_t::number_integer:
		out << j.get<int64_t>();
		break;
	case json::value_t::number_float:
		out << j.get<double>();
		break;
	default:
		out << YAML::Null;
	}
}

// YAML scalars carry no type of their own: CDI's integer and boolean fields
// (known by their key) become numbers and booleans, everything else strings.
json from_yaml_node(const YAML::Node &n, const std::string &key)
{
	static const std::set<std::string> integers = {"major", "minor", "fileMode", "uid", "gid",
						       "timeout", "additionalGids"};
	static const std::set<std::string> booleans = {"enableCMT", "enableMBM"};
	switch (n.Type()) {
	case YAML::NodeType::Map: {
		json o = json::object();
		for (const auto &kv : n) {
			std::string k = kv.first.as<std::string>();
			o[k] = from_yaml_node(kv.second, k);
		}
		return o;
	}
	case YAML::NodeType::Sequence: {
		json a = json::array();
		for (const auto &v : n)
			a.push_back(from_yaml_node(v, key));
		return a;
	}
	case YAML::NodeType::Scalar: {
		const std::string s = n.Scalar();
		static const std::regex integer(R"(^-?(0|[1-9][0-9]{0,17}|0[0-7]+|0x[0-9a-fA-F]+)$)");
		if (n.Tag() != "!" && integers.contains(key) && std::regex_match(s, integer))
			return std::stoll(s, nullptr, 0);
		if (n.Tag() != "!" && booleans.contains(key) && (s == "true" || s == "false"))
			return s == "true";
		return s;
	}
	default:
		return nullptr;
	}
}

class Checker {
public:
	explicit Checker(bool check_host) : check_host_(check_host) {}
	std::vector<std::string> problems;

	void fail(const std::string &where, const std::string &what)
	{
		problems.push_back(fmt::format("{}: {}", where, what));
	}

	void only_keys(const json &obj, const std::string &where, std::initializer_list<const char *> keys)
	{
		for (const auto &[k, v] : obj.items())
			if (std::none_of(keys.begin(), keys.end(), [&](const char *a) { return k == a; }))
				fail(where.empty() ? k : where + "." + k,
				     fmt::format("unknown field (valid here: {})", fmt::join(keys, ", ")));
	}

	bool string_field(const json &obj, const char *key, const std::string &where, bool required)
	{
		if (!obj.contains(key)) {
			if (required)
				fail(where + "." + key, "missing (required)");
			return false;
		}
		if (!obj[key].is_string()) {
			fail(where + "." + key, "must be a string");
			return false;
		}
		return true;
	}

	void absolute_path(const json &obj, const char *key, const std::string &where, bool required)
	{
		if (string_field(obj, key, where, required) && !obj[key].get<std::string>().starts_with("/"))
			fail(where + "." + key, fmt::format("'{}' must be an absolute path",
							    obj[key].get<std::string>()));
	}

	// Calls @check(element, "where.key[i]") for each object in list @key of @e.
	template <typename Check>
	void each_object(const json &e, const char *key, const std::string &where, Check check)
	{
		if (!e.contains(key))
			return;
		std::string list = where + "." + key;
		if (!e[key].is_array())
			return fail(list, "must be a list");
		for (size_t i = 0; i < e[key].size(); i++) {
			std::string w = fmt::format("{}[{}]", list, i);
			if (e[key][i].is_object())
				check(e[key][i], w);
			else
				fail(w, "must be an object");
		}
	}

	void device_node(const json &n, const std::string &where)
	{
		only_keys(n, where, {"path", "hostPath", "type", "major", "minor", "fileMode",
				     "permissions", "uid", "gid"});
		absolute_path(n, "path", where, true);
		absolute_path(n, "hostPath", where, false);
		if (string_field(n, "type", where, false) &&
		    !std::set<std::string>{"c", "b", "u", "p"}.contains(n["type"].get<std::string>()))
			fail(where + ".type", fmt::format("'{}' is not a device type (c, b, u or p)",
							  n["type"].get<std::string>()));
		if (string_field(n, "permissions", where, false)) {
			const auto p = n["permissions"].get<std::string>();
			if (p.empty() || p.find_first_not_of("rwm") != std::string::npos)
				fail(where + ".permissions",
				     fmt::format("'{}' must be one or more of r, w, m", p));
		}
		for (const char *k : {"major", "minor", "fileMode", "uid", "gid"})
			if (n.contains(k) && !n[k].is_number_integer())
				fail(where + "." + k, "must be an integer");
		if (check_host_ && n.contains("path") && n["path"].is_string()) {
			std::string host = n.contains("hostPath") && n["hostPath"].is_string()
						   ? n["hostPath"].get<std::string>() : n["path"].get<std::string>();
			struct stat st{};
			if (::stat(host.c_str(), &st) != 0)
				fail(where, fmt::format("host device {} does not exist ({})", host,
							std::strerror(errno)));
			else if (!S_ISCHR(st.st_mode))
				fail(where, fmt::format("host path {} is not a character device", host));
		}
	}

	void edits(const json &e, const std::string &where)
	{
		if (!e.is_object())
			return fail(where, "must be an object");
		only_keys(e, where, {"env", "deviceNodes", "mounts", "hooks", "additionalGids", "intelRdt"});
		if (e.contains("env")) {
			if (!e["env"].is_array())
				fail(where + ".env", "must be a list of NAME=VALUE strings");
			else
				for (size_t i = 0; i < e["env"].size(); i++) {
					const auto &v = e["env"][i];
					if (!v.is_string() || v.get<std::string>().find('=') == std::string::npos ||
					    v.get<std::string>().starts_with("="))
						fail(fmt::format("{}.env[{}]", where, i), "must be NAME=VALUE");
				}
		}
		each_object(e, "deviceNodes", where, [&](const json &n, const std::string &w) {
			device_node(n, w);
		});
		each_object(e, "mounts", where, [&](const json &m, const std::string &w) {
			only_keys(m, w, {"hostPath", "containerPath", "type", "options"});
			absolute_path(m, "hostPath", w, true);
			absolute_path(m, "containerPath", w, true);
		});
		each_object(e, "hooks", where, [&](const json &h, const std::string &w) {
			static const std::set<std::string> names = {"prestart", "createRuntime", "createContainer",
								    "startContainer", "poststart", "poststop"};
			only_keys(h, w, {"hookName", "path", "args", "env", "timeout"});
			if (string_field(h, "hookName", w, true) && !names.contains(h["hookName"].get<std::string>()))
				fail(w + ".hookName", fmt::format("'{}' is not an OCI hook",
								  h["hookName"].get<std::string>()));
			absolute_path(h, "path", w, true);
		});
	}

private:
	bool check_host_;
};

bool valid_dns_subdomain(const std::string &s)
{
	static const std::regex label(R"(^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$)");
	if (s.empty() || s.size() > 253)
		return false;
	size_t pos = 0;
	while (true) {
		size_t dot = s.find('.', pos);
		if (!std::regex_match(s.substr(pos, dot == std::string::npos ? std::string::npos : dot - pos), label))
			return false;
		if (dot == std::string::npos)
			return true;
		pos = dot + 1;
	}
}

const std::regex kNamePattern(R"(^[A-Za-z0-9]([A-Za-z0-9_.-]*[A-Za-z0-9])?$)");

} // namespace

json make_spec(const std::vector<NpuInfo> &npus, NameStrategy names)
{
	json devices = json::array();
	for (const auto &n : npus) {
		if (names != NameStrategy::uuid)
			devices.push_back(device(std::to_string(n.index), {n}));
		if (names != NameStrategy::index)
			devices.push_back(device(n.uuid, {n}));
	}
	if (!npus.empty())
		devices.push_back(device("all", npus));
	json spec = {{"kind", kCdiKind}, {"devices", devices}};
	spec["cdiVersion"] = required_cdi_version(spec);
	return spec;
}

std::string required_cdi_version(const json &spec)
{
	std::string v = "0.3.0";
	auto at_least = [&](const char *w) { if (version_number(w) > version_number(v)) v = w; };
	const json none = json::object();
	const json &global = spec.contains("containerEdits") ? spec["containerEdits"] : none;
	std::vector<const json *> all_edits = {&global};
	if (spec.contains("devices") && spec["devices"].is_array())
		for (const auto &d : spec["devices"]) {
			if (d.is_object() && d.contains("containerEdits"))
				all_edits.push_back(&d["containerEdits"]);
			if (d.is_object() && d.contains("annotations"))
				at_least("0.6.0");
		}
	for (const json *e : all_edits) {
		if (e->is_object() && e->contains("mounts") && (*e)["mounts"].is_array())
			for (const auto &m : (*e)["mounts"])
				if (m.is_object() && m.contains("type"))
					at_least("0.4.0");
		if (uses_host_path(*e))
			at_least("0.5.0");
		if (uses_key(*e, "additionalGids") || uses_key(*e, "intelRdt"))
			at_least("0.7.0");
	}
	if (spec.contains("annotations"))
		at_least("0.6.0");
	if (spec.contains("kind") && spec["kind"].is_string()) {
		std::string kind = spec["kind"];
		size_t slash = kind.find('/');
		if (slash != std::string::npos && kind.find('.', slash) != std::string::npos)
			at_least("0.6.0");
	}
	return v;
}

std::string spec_to_yaml(const json &spec)
{
	YAML::Emitter out;
	emit(out, spec);
	return std::string("---\n") + out.c_str() + "\n";
}

std::string spec_to_json(const json &spec)
{
	return spec.dump(2) + "\n";
}

json load_spec(const std::string &path)
{
	try {
		return from_yaml_node(YAML::LoadFile(path), "");
	} catch (const YAML::BadFile &) {
		throw std::runtime_error(fmt::format("{}: cannot read: {}", path, std::strerror(errno)));
	} catch (const YAML::Exception &e) {
		throw std::runtime_error(fmt::format("{}:{}:{}: not valid YAML or JSON: {}", path,
						     e.mark.line + 1, e.mark.column + 1, e.msg));
	}
}

std::vector<std::string> validate_spec(const json &spec, bool check_host)
{
	Checker c(check_host);
	if (!spec.is_object()) {
		c.fail("spec", "must be a mapping with cdiVersion, kind and devices");
		return c.problems;
	}
	c.only_keys(spec, "", {"cdiVersion", "kind", "annotations", "devices", "containerEdits"});

	if (c.string_field(spec, "cdiVersion", "spec", true)) {
		std::string v = spec["cdiVersion"];
		int n = version_number(v);
		if (n < version_number("0.3.0") || n > version_number("0.8.0"))
			c.fail("cdiVersion", fmt::format("'{}' is not a released CDI version (0.3.0 .. 0.8.0)", v));
		else if (n < version_number(required_cdi_version(spec)))
			c.fail("cdiVersion", fmt::format("'{}' is too low for the features used (needs {})", v,
							 required_cdi_version(spec)));
	}

	if (c.string_field(spec, "kind", "spec", true)) {
		std::string kind = spec["kind"];
		size_t slash = kind.find('/');
		static const std::regex name(R"(^[A-Za-z0-9]([A-Za-z0-9_.-]{0,61}[A-Za-z0-9])?$)");
		if (slash == std::string::npos || !valid_dns_subdomain(kind.substr(0, slash)) ||
		    !std::regex_match(kind.substr(slash + 1), name))
			c.fail("kind", fmt::format("'{}' is not VENDOR/CLASS (a DNS subdomain, '/', then a name "
						   "of letters, digits, '-', '_', '.', e.g. rebellions.ai/npu)",
						   kind));
	}

	if (spec.contains("containerEdits"))
		c.edits(spec["containerEdits"], "containerEdits");

	if (!spec.contains("devices") || !spec["devices"].is_array() || spec["devices"].empty()) {
		c.fail("devices", "must be a non-empty list");
		return c.problems;
	}
	std::set<std::string> seen;
	for (size_t i = 0; i < spec["devices"].size(); i++) {
		const auto &d = spec["devices"][i];
		std::string where = fmt::format("devices[{}]", i);
		if (!d.is_object()) {
			c.fail(where, "must be an object");
			continue;
		}
		c.only_keys(d, where, {"name", "annotations", "containerEdits"});
		if (c.string_field(d, "name", where, true)) {
			std::string name = d["name"];
			if (!std::regex_match(name, kNamePattern))
				c.fail(where + ".name", fmt::format("'{}' must start and end with a letter or digit "
								    "and hold only letters, digits, '-', '_', '.'", name));
			else if (!seen.insert(name).second)
				c.fail(where + ".name", fmt::format("'{}' is defined twice", name));
		}
		if (d.contains("containerEdits"))
			c.edits(d["containerEdits"], where + ".containerEdits");
	}
	return c.problems;
}

std::vector<std::string> cdi_spec_dirs()
{
	const char *env = std::getenv("RBLN_CDI_SPEC_DIRS");
	if (!env || !*env)
		return {"/etc/cdi", "/var/run/cdi"};
	return split(env, ':');
}

std::vector<std::string> cdi_spec_files(const std::vector<std::string> &dirs)
{
	std::vector<std::string> files;
	for (const auto &d : dirs) {
		std::error_code ec;
		for (const auto &e : fs::directory_iterator(d, ec)) {
			auto ext = e.path().extension();
			if (e.is_regular_file() && (ext == ".yaml" || ext == ".yml" || ext == ".json"))
				files.push_back(e.path().string());
		}
	}
	std::sort(files.begin(), files.end());
	return files;
}

json cdi_device_edits(const std::string &name)
{
	auto dirs = cdi_spec_dirs();
	for (const auto &file : cdi_spec_files(dirs)) {
		json spec;
		try {
			spec = load_spec(file);
		} catch (const std::exception &) {
			continue;	// another vendor's problem unless it is ours; see below
		}
		if (!spec.is_object() || spec.value("kind", "") != kCdiKind)
			continue;
		for (const auto &d : spec.value("devices", json::array())) {
			if (!d.is_object() || d.value("name", "") != name)
				continue;
			auto problems = validate_spec(spec, false);
			if (!problems.empty())
				throw Error(Errc::invalid_argument, EINVAL,
					    fmt::format("{}: the spec holding {}={} is not valid: {} (rbln-ctk cdi "
							"validate {})", file, kCdiKind, name, problems[0], file));
			return {{"device", d.value("containerEdits", json::object())},
				{"spec", spec.value("containerEdits", json::object())}};
		}
	}
	throw Error(Errc::not_found, ENOENT,
		    fmt::format("CDI device {}={} is not in any spec in {} (rbln-ctk cdi list shows what "
				"is; rbln-ctk cdi generate writes the spec)", kCdiKind, name,
				fmt::join(dirs, ", ")));
}

std::vector<std::string> qualified_device_names(const json &spec)
{
	std::vector<std::string> out;
	if (spec.contains("devices") && spec["devices"].is_array())
		for (const auto &d : spec["devices"])
			if (d.is_object() && d.contains("name") && d["name"].is_string())
				out.push_back(fmt::format("{}={}", spec.value("kind", std::string("?")),
							  d["name"].get<std::string>()));
	return out;
}

void write_file_atomic(const std::string &path, const std::string &text, unsigned mode)
{
	fs::path p(path);
	std::error_code ec;
	if (p.has_parent_path())
		fs::create_directories(p.parent_path(), ec);
	std::string tmp = path + ".tmp-XXXXXX";
	int fd = ::mkstemp(tmp.data());
	if (fd < 0)
		throw std::runtime_error(fmt::format("cannot write {}: {}", path, std::strerror(errno)));
	bool ok = ::fchmod(fd, mode) == 0;
	for (size_t done = 0; ok && done < text.size();) {
		ssize_t n = ::write(fd, text.data() + done, text.size() - done);
		if (n <= 0)
			ok = false;
		else
			done += size_t(n);
	}
	ok = ok && ::fsync(fd) == 0;
	int err = errno;
	::close(fd);
	if (!ok || ::rename(tmp.c_str(), path.c_str()) != 0) {
		err = ok ? errno : err;
		::unlink(tmp.c_str());
		throw std::runtime_error(fmt::format("cannot write {}: {}", path, std::strerror(err)));
	}
}

} // namespace rbln::ctk
