// SPDX-License-Identifier: MIT
// CDI (Container Device Interface) specs for RBLN NPUs: making one from the
// NPUs found, reading one (YAML or JSON), and checking it against the CDI
// rules.  The spec is held as JSON, the CDI data model.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include <rbln/enumerate.hpp>

namespace rbln::ctk {

using json = nlohmann::json;

inline constexpr const char *kCdiKind = "rebellions.ai/npu";
inline constexpr const char *kDefaultSpecPath = "/var/run/cdi/rbln.yaml";
// Where CDI specs live: /etc/cdi and /var/run/cdi (RBLN_CDI_SPEC_DIRS, colon-
// separated, overrides them for tests).
std::vector<std::string> cdi_spec_dirs();
// The spec files in @dirs (*.yaml, *.yml, *.json), sorted.
std::vector<std::string> cdi_spec_files(const std::vector<std::string> &dirs);

enum class NameStrategy { index, uuid, both };

// One device per NPU (npu=N and/or npu=<uuid>) and npu=all.  Each carries the
// NPU's node and /dev/rblnN pointing at it; @common are the edits every
// device gets (the library and tool injection).  cdiVersion is the lowest
// the spec's features need.
json make_spec(const std::vector<NpuInfo> &npus, NameStrategy names, const json &common = json::object());

// The lowest CDI version whose features @spec uses.
std::string required_cdi_version(const json &spec);

std::string spec_to_yaml(const json &spec);
std::string spec_to_json(const json &spec);

// Reads a spec in YAML or JSON.  Throws std::runtime_error naming the file
// and where it does not parse.
json load_spec(const std::string &path);

// Every way @spec breaks the CDI rules (cdi_validate.cpp), one line each ("devices[1].name:
// ..."); empty when valid.  With @check_host, device nodes must exist on this
// host as character devices.
std::vector<std::string> validate_spec(const json &spec, bool check_host);

// What a CDI consumer applies for device rebellions.ai/npu=@name: the
// device's containerEdits, then the spec's own (under "device" and "spec").
// Throws rbln::Error (not_found) naming the device and where it looked, or
// (invalid_argument) if the spec holding it is not valid.
json cdi_device_edits(const std::string &name);

// "rebellions.ai/npu=0", ... of a spec.
std::vector<std::string> qualified_device_names(const json &spec);

// Writes @text to @path atomically (temporary file in the same directory,
// fsync, rename), creating the directory.  Throws std::runtime_error.
void write_file_atomic(const std::string &path, const std::string &text, unsigned mode = 0644);

// Serializes the writers of the spec at @path (udev runs one per NPU event,
// in parallel): an exclusive flock on PATH.lock, held while alive.  A
// writer that enumerates under the lock sees every NPU whose event came
// before it, so the last one writes the final state.
class SpecLock {
public:
	explicit SpecLock(const std::string &path);
	~SpecLock();
	SpecLock(const SpecLock &) = delete;
	SpecLock &operator=(const SpecLock &) = delete;

private:
	int fd_;
};

// Writes @text to @path atomically unless it holds that already (CDI caches
// watch the directory).  True if it wrote.
bool write_file_if_changed(const std::string &path, const std::string &text);

} // namespace rbln::ctk
