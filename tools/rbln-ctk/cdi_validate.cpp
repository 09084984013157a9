// SPDX-License-Identifier: MIT
// The CDI spec's rules, as the reference implementation
// (tags.cncf.io/container-device-interface, spec 1.1.0) applies them: the
// known versions and the lowest one each feature needs, vendor, class and
// device name syntax, annotation keys, and the container edits.  Where this is
// stricter (negative device numbers and ids) it says so in the message.
#include "cdi.hpp"

#include <cerrno>
#include <cstring>
#include <regex>
#include <set>

#include <sys/stat.h>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace rbln::ctk {

namespace {

// The released spec versions, oldest first.  0.1.0 and 0.2.0 are known but
// below the earliest a consumer supports (0.3.0).
const std::vector<std::string> kKnownVersions = {"0.1.0", "0.2.0", "0.3.0", "0.4.0", "0.5.0", "0.6.0",
						 "0.7.0", "0.8.0", "1.0.0", "1.1.0"};
constexpr const char *kEarliestVersion = "0.3.0";

int version_rank(const std::string &v)
{
	auto it = std::find(kKnownVersions.begin(), kKnownVersions.end(), v);
	return it == kKnownVersions.end() ? -1 : int(it - kKnownVersions.begin());
}

bool is_letter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool is_alnum(char c) { return is_letter(c) || (c >= '0' && c <= '9'); }

// Vendor and class: a letter first, a letter or digit last, and letters,
// digits, '_', '-', '.' between.
std::string vendor_or_class_problem(const std::string &s)
{
	if (s.empty())
		return "is empty";
	if (!is_letter(s.front()))
		return "must start with a letter";
	if (!is_alnum(s.back()))
		return "must end with a letter or digit";
	for (char c : s)
		if (!is_alnum(c) && c != '_' && c != '-' && c != '.')
			return fmt::format("has '{}' (valid: letters, digits, '_', '-', '.')", c);
	return "";
}

// Device names: a letter or digit first and last, and letters, digits,
// '_', '-', '.', ':' between.
std::string device_name_problem(const std::string &s)
{
	if (s.empty())
		return "is empty";
	if (!is_alnum(s.front()) || !is_alnum(s.back()))
		return "must start and end with a letter or digit";
	for (char c : s)
		if (!is_alnum(c) && c != '_' && c != '-' && c != '.' && c != ':')
			return fmt::format("has '{}' (valid: letters, digits, '_', '-', '.', ':')", c);
	return "";
}

// Annotation keys are Kubernetes qualified names: [DNS-subdomain/]name.
bool valid_annotation_key(const std::string &key)
{
	static const std::regex name(R"(^[A-Za-z0-9]([-A-Za-z0-9_.]{0,61}[A-Za-z0-9])?$)");
	static const std::regex label(R"(^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$)");
	size_t slash = key.find('/');
	if (slash == std::string::npos)
		return std::regex_match(key, name);
	std::string prefix = key.substr(0, slash);
	if (prefix.empty() || prefix.size() > 253 || !std::regex_match(key.substr(slash + 1), name))
		return false;
	for (size_t pos = 0;;) {
		size_t dot = prefix.find('.', pos);
		if (!std::regex_match(prefix.substr(pos, dot == std::string::npos ? dot : dot - pos), label))
			return false;
		if (dot == std::string::npos)
			return true;
		pos = dot + 1;
	}
}

const json &edits_of(const json &holder)
{
	static const json none = json::object();
	return holder.is_object() && holder.contains("containerEdits") && holder["containerEdits"].is_object()
		       ? holder["containerEdits"] : none;
}

bool list_has(const json &edits, const char *key, const char *field)
{
	if (!edits.contains(key) || !edits[key].is_array())
		return false;
	for (const auto &e : edits[key])
		if (e.is_object() && e.contains(field))
			return true;
	return false;
}

bool non_empty(const json &edits, const char *key)
{
	return edits.contains(key) && !(edits[key].is_array() && edits[key].empty()) && !edits[key].is_null();
}

class Checker {
public:
	explicit Checker(bool check_host) : check_host_(check_host) {}
	std::vector<std::string> problems;

	void fail(const std::string &where, const std::string &what)
	{
		problems.push_back(fmt::format("{}: {}", where, what));
	}

	// Fields CDI does not define are refused, as its strict parser does.
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
		if (required && obj[key].get_ref<const std::string &>().empty()) {
			fail(where + "." + key, "must not be empty");
			return false;
		}
		return true;
	}

	void string_list(const json &obj, const char *key, const std::string &where)
	{
		if (!obj.contains(key))
			return;
		if (!obj[key].is_array())
			return fail(where + "." + key, "must be a list of strings");
		for (size_t i = 0; i < obj[key].size(); i++)
			if (!obj[key][i].is_string())
				fail(fmt::format("{}.{}[{}]", where, key, i), "must be a string");
	}

	// An integer in [@min, @max]; @why says where a bound comes from.
	void integer(const json &obj, const char *key, const std::string &where, int64_t min, int64_t max,
		     const char *why)
	{
		if (!obj.contains(key))
			return;
		const json &v = obj[key];
		if (!v.is_number_integer())
			return fail(where + "." + key, "must be an integer");
		int64_t n = v.is_number_unsigned() && v.get<uint64_t>() > uint64_t(INT64_MAX) ? INT64_MAX : v.get<int64_t>();
		if (n < min || n > max)
			fail(where + "." + key, fmt::format("{} is out of range {}..{} ({})", n, min, max, why));
	}

	void env_list(const json &obj, const std::string &where)
	{
		if (!obj.contains("env"))
			return;
		if (!obj["env"].is_array())
			return fail(where + ".env", "must be a list of NAME=VALUE strings");
		for (size_t i = 0; i < obj["env"].size(); i++) {
			const auto &v = obj["env"][i];
			if (!v.is_string() || v.get_ref<const std::string &>().find('=') == 0 ||
			    v.get_ref<const std::string &>().find('=') == std::string::npos)
				fail(fmt::format("{}.env[{}]", where, i), "must be NAME=VALUE");
		}
	}

	void annotations(const json &holder, const std::string &where)
	{
		if (!holder.contains("annotations"))
			return;
		const json &a = holder["annotations"];
		if (!a.is_object())
			return fail(where + "annotations", "must be a mapping of strings");
		size_t total = 0;
		for (const auto &[k, v] : a.items()) {
			std::string w = fmt::format("{}annotations.{}", where, k);
			if (!valid_annotation_key(k))
				fail(w, "not a valid key ([DNS-subdomain/]name, the name up to 63 letters, digits, "
					"'-', '_', '.', starting and ending with a letter or digit)");
			if (!v.is_string())
				fail(w, "must be a string");
			else
				total += k.size() + v.get_ref<const std::string &>().size();
		}
		if (total > 256 * 1024)
			fail(where + "annotations", fmt::format("{} bytes in total, over the limit of 256 KiB", total));
	}

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
		string_field(n, "path", where, true);
		string_field(n, "hostPath", where, false);
		if (string_field(n, "type", where, false) &&
		    !std::set<std::string>{"", "c", "b", "u", "p"}.contains(n["type"].get<std::string>()))
			fail(where + ".type", fmt::format("'{}' is not a device type (c, b, u or p)",
							  n["type"].get<std::string>()));
		if (string_field(n, "permissions", where, false)) {
			const auto p = n["permissions"].get<std::string>();
			if (p.find_first_not_of("rwm") != std::string::npos)
				fail(where + ".permissions", fmt::format("'{}' may hold only r, w, m", p));
		}
		// Linux device numbers: 12-bit major, 20-bit minor.
		integer(n, "major", where, 0, 4095, "a Linux major number");
		integer(n, "minor", where, 0, (1 << 20) - 1, "a Linux minor number");
		integer(n, "fileMode", where, 0, UINT32_MAX, "an unsigned 32-bit mode");
		integer(n, "uid", where, 0, UINT32_MAX, "an unsigned 32-bit id");
		integer(n, "gid", where, 0, UINT32_MAX, "an unsigned 32-bit id");
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
		only_keys(e, where, {"env", "deviceNodes", "hooks", "mounts", "intelRdt", "additionalGids",
				     "netDevices"});
		env_list(e, where);
		each_object(e, "deviceNodes", where, [&](const json &n, const std::string &w) {
			device_node(n, w);
		});
		each_object(e, "mounts", where, [&](const json &m, const std::string &w) {
			only_keys(m, w, {"hostPath", "containerPath", "type", "options"});
			string_field(m, "hostPath", w, true);
			string_field(m, "containerPath", w, true);
			string_field(m, "type", w, false);
			string_list(m, "options", w);
		});
		each_object(e, "hooks", where, [&](const json &h, const std::string &w) {
			static const std::set<std::string> names = {"prestart", "createRuntime", "createContainer",
								    "startContainer", "poststart", "poststop"};
			only_keys(h, w, {"hookName", "path", "args", "env", "timeout"});
			if (string_field(h, "hookName", w, true) && !names.contains(h["hookName"].get<std::string>()))
				fail(w + ".hookName", fmt::format("'{}' is not an OCI hook ({})",
								  h["hookName"].get<std::string>(), fmt::join(names, ", ")));
			string_field(h, "path", w, true);
			string_list(h, "args", w);
			env_list(h, w);
			integer(h, "timeout", w, INT32_MIN, INT32_MAX, "an int");
		});
		each_object(e, "netDevices", where, [&](const json &d, const std::string &w) {
			only_keys(d, w, {"hostInterfaceName", "name"});
			string_field(d, "hostInterfaceName", w, true);
			string_field(d, "name", w, true);
		});
		if (e.contains("intelRdt")) {
			const json &r = e["intelRdt"];
			const std::string w = where + ".intelRdt";
			if (!r.is_object())
				return fail(w, "must be an object");
			only_keys(r, w, {"closID", "l3CacheSchema", "memBwSchema", "schemata", "enableMonitoring"});
			if (string_field(r, "closID", w, false)) {
				const auto id = r["closID"].get<std::string>();
				if (id == "." || id == ".." || id.find('/') != std::string::npos)
					fail(w + ".closID", fmt::format("'{}' is not a valid resctrl group name", id));
			}
			string_field(r, "l3CacheSchema", w, false);
			string_field(r, "memBwSchema", w, false);
			string_list(r, "schemata", w);
			if (r.contains("enableMonitoring") && !r["enableMonitoring"].is_boolean())
				fail(w + ".enableMonitoring", "must be true or false");
		}
		if (e.contains("additionalGids")) {
			if (!e["additionalGids"].is_array())
				fail(where + ".additionalGids", "must be a list of group ids");
			else
				for (size_t i = 0; i < e["additionalGids"].size(); i++) {
					const json &g = e["additionalGids"][i];
					if (!g.is_number_integer() || g.get<int64_t>() < 0 || g.get<int64_t>() > UINT32_MAX)
						fail(fmt::format("{}.additionalGids[{}]", where, i),
						     "must be a group id (0..4294967295)");
				}
		}
	}

private:
	bool check_host_;
};

} // namespace

std::string required_cdi_version(const json &spec)
{
	std::string v = kEarliestVersion;
	auto at_least = [&](const char *w) { if (version_rank(w) > version_rank(v)) v = w; };
	std::vector<const json *> all_edits = {&edits_of(spec)};
	if (spec.contains("devices") && spec["devices"].is_array())
		for (const auto &d : spec["devices"]) {
			all_edits.push_back(&edits_of(d));
			if (d.is_object() && d.contains("annotations") && !d["annotations"].empty())
				at_least("0.6.0");
			// Names starting with a digit (npu=0) came with 0.5.0.
			if (d.is_object() && d.contains("name") && d["name"].is_string() &&
			    !d["name"].get_ref<const std::string &>().empty() && !is_letter(d["name"].get<std::string>()[0]))
				at_least("0.5.0");
		}
	for (const json *e : all_edits) {
		if (list_has(*e, "mounts", "type"))
			at_least("0.4.0");
		if (list_has(*e, "deviceNodes", "hostPath"))
			at_least("0.5.0");
		if (e->contains("intelRdt") || non_empty(*e, "additionalGids"))
			at_least("0.7.0");
		if (non_empty(*e, "netDevices"))
			at_least("1.1.0");
		if (e->contains("intelRdt") && (*e)["intelRdt"].is_object() &&
		    ((*e)["intelRdt"].contains("schemata") || (*e)["intelRdt"].value("enableMonitoring", false)))
			at_least("1.1.0");
	}
	if (spec.contains("annotations") && !spec["annotations"].empty())
		at_least("0.6.0");
	// Dots in the class (after the '/') came with 0.6.0.
	if (spec.contains("kind") && spec["kind"].is_string()) {
		std::string kind = spec["kind"];
		size_t slash = kind.find('/');
		if (slash != std::string::npos && kind.find('.', slash) != std::string::npos)
			at_least("0.6.0");
	}
	return v;
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
		std::string needed = required_cdi_version(spec);
		if (version_rank(v) < 0)
			c.fail("cdiVersion", fmt::format("'{}' is not a released CDI version ({})", v,
							 fmt::join(kKnownVersions.begin() + 2, kKnownVersions.end(), ", ")));
		else if (version_rank(v) < version_rank(needed))
			c.fail("cdiVersion", fmt::format("'{}' is too low for the features used (needs {})", v, needed));
	}

	if (c.string_field(spec, "kind", "spec", true)) {
		std::string kind = spec["kind"];
		size_t slash = kind.find('/');
		if (slash == std::string::npos)
			c.fail("kind", fmt::format("'{}' is not VENDOR/CLASS (e.g. rebellions.ai/npu)", kind));
		else
			for (auto [part, text] : {std::pair{"vendor", kind.substr(0, slash)},
						  std::pair{"class", kind.substr(slash + 1)}})
				if (auto why = vendor_or_class_problem(text); !why.empty())
					c.fail("kind", fmt::format("'{}': {} '{}' {} (VENDOR/CLASS, e.g. rebellions.ai/npu)",
								   kind, part, text, why));
	}
	c.annotations(spec, "");
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
			if (auto why = device_name_problem(name); !why.empty())
				c.fail(where + ".name", fmt::format("'{}' {}", name, why));
			else if (!seen.insert(name).second)
				c.fail(where + ".name", fmt::format("'{}' is defined twice", name));
		}
		c.annotations(d, where + ".");
		const json &e = edits_of(d);
		if (!d.contains("containerEdits"))
			c.fail(where + ".containerEdits", "missing (a device must edit the container)");
		else if (!d["containerEdits"].is_object())
			c.edits(d["containerEdits"], where + ".containerEdits");
		else if (std::none_of(e.begin(), e.end(), [](const json &v) { return !v.empty(); }))
			c.fail(where + ".containerEdits", "empty (a device must edit the container)");
		else
			c.edits(e, where + ".containerEdits");
	}
	return c.problems;
}

} // namespace rbln::ctk
