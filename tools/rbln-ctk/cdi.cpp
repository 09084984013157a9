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
#include <system_error>

#include <fcntl.h>
#include <sys/file.h>
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
	static const std::set<std::string> booleans = {"enableCMT", "enableMBM", "enableMonitoring"};
	switch (n.Type()) {
	case YAML::NodeType::Map: {
		json o = json::object();
		for (const auto &kv : n) {
			std::string k = kv.first.as<std::string>();
			// YAML forbids duplicate keys, and CDI's strict parser refuses them.
			if (o.contains(k))
				throw YAML::Exception(kv.first.Mark(), fmt::format("duplicate key '{}'", k));
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
		static const std::regex boolean(R"(^(true|True|TRUE|false|False|FALSE)$)");
		if (n.Tag() != "!" && booleans.contains(key) && std::regex_match(s, boolean))
			return s[0] == 't' || s[0] == 'T';
		return s;
	}
	default:
		return nullptr;
	}
}

} // namespace

json make_spec(const std::vector<NpuInfo> &npus, NameStrategy names, const json &common)
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
	if (!common.empty())
		spec["containerEdits"] = common;
	spec["cdiVersion"] = required_cdi_version(spec);
	return spec;
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
		int err = errno;
		throw std::system_error(err, std::generic_category(), fmt::format("{}: cannot read", path));
	} catch (const YAML::Exception &e) {
		throw std::runtime_error(fmt::format("{}:{}:{}: not valid YAML or JSON: {}", path,
						     e.mark.line + 1, e.mark.column + 1, e.msg));
	}
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
	if (fd < 0) {
		int err = errno;
		throw std::system_error(err, std::generic_category(), fmt::format("cannot write {}", path));
	}
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
		throw std::system_error(err, std::generic_category(), fmt::format("cannot write {}", path));
	}
}

SpecLock::SpecLock(const std::string &path)
{
	fs::path p(path);
	std::error_code ec;
	if (p.has_parent_path())
		fs::create_directories(p.parent_path(), ec);
	fd_ = ::open((path + ".lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
	if (fd_ < 0 || ::flock(fd_, LOCK_EX) != 0) {
		int err = errno;
		throw std::system_error(err, std::generic_category(), fmt::format("cannot lock {}.lock", path));
	}
}

SpecLock::~SpecLock()
{
	::close(fd_);
}

bool write_file_if_changed(const std::string &path, const std::string &text)
{
	std::ifstream in(path, std::ios::binary);
	if (in && std::string(std::istreambuf_iterator<char>(in), {}) == text)
		return false;
	write_file_atomic(path, text, 0644);
	return true;
}

} // namespace rbln::ctk
