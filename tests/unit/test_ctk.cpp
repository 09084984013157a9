// The container toolkit's logic: CDI specs, requests, OCI edits, runtime
// configuration and settings.  Device nodes are stood in for by /dev/null.
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <CLI/CLI.hpp>
#include <gtest/gtest.h>
#include <toml++/toml.h>

#include "cdi.hpp"
#include "oci.hpp"
#include "request.hpp"
#include "runtime_config.hpp"
#include "shim_args.hpp"
#include "toolkit_config.hpp"

using namespace rbln;
using namespace rbln::ctk;
namespace fs = std::filesystem;

namespace {

NpuInfo npu(unsigned index, const std::string &node = "/dev/null")
{
	NpuInfo n{};
	n.index = index;
	n.node = node;
	n.uuid = "52424c4e-2030-4003-8000-0000000000" + std::to_string(10 + index);
	n.name = "RBLN-CR03";
	n.node_present = true;
	return n;
}

const std::vector<NpuInfo> kHost = {npu(0), npu(1), npu(2)};

struct TempDir {
	fs::path path = fs::temp_directory_path() / ("rbln-ctk-test-" + std::to_string(::getpid()) + "-" +
						     std::to_string(std::rand()));
	TempDir() { fs::create_directories(path); }
	~TempDir() { fs::remove_all(path); }
	std::string file(const std::string &name, const std::string &text) const
	{
		fs::create_directories((path / name).parent_path());
		std::ofstream(path / name) << text;
		return (path / name).string();
	}
};

std::string read(const std::string &path)
{
	std::ifstream in(path);
	return {std::istreambuf_iterator<char>(in), {}};
}

std::vector<std::string> names(const json &spec)
{
	std::vector<std::string> out;
	for (const auto &d : spec["devices"])
		out.push_back(d["name"]);
	return out;
}

} // namespace

TEST(CdiSpec, DevicesPerNameStrategy)
{
	EXPECT_EQ(names(make_spec(kHost, NameStrategy::index)), (std::vector<std::string>{"0", "1", "2", "all"}));
	auto uuid = names(make_spec({npu(1)}, NameStrategy::uuid));
	EXPECT_EQ(uuid, (std::vector<std::string>{npu(1).uuid, "all"}));
	EXPECT_EQ(names(make_spec({npu(1)}, NameStrategy::both)).size(), 3u);
}

TEST(CdiSpec, NodesAndVersion)
{
	json spec = make_spec({npu(1, "/dev/accel/accel1")}, NameStrategy::index);
	EXPECT_EQ(spec["kind"], "rebellions.ai/npu");
	// hostPath in deviceNodes is a CDI 0.5.0 feature, and nothing newer is used.
	EXPECT_EQ(spec["cdiVersion"], "0.5.0");
	const json &nodes = spec["devices"][0]["containerEdits"]["deviceNodes"];
	ASSERT_EQ(nodes.size(), 2u);
	EXPECT_EQ(nodes[0]["path"], "/dev/accel/accel1");
	EXPECT_EQ(nodes[1]["path"], "/dev/rbln1");
	EXPECT_EQ(nodes[1]["hostPath"], "/dev/accel/accel1");
	EXPECT_EQ(spec["devices"][1]["name"], "all");
	EXPECT_TRUE(validate_spec(spec, false).empty());
}

TEST(CdiSpec, YamlAndJsonRoundTrip)
{
	TempDir d;
	json spec = make_spec(kHost, NameStrategy::both);
	std::string yaml = spec_to_yaml(spec);
	// A device named 0 must stay a string: it is quoted.
	EXPECT_NE(yaml.find("name: \"0\""), std::string::npos) << yaml;
	EXPECT_EQ(load_spec(d.file("rbln.yaml", yaml)), spec);
	EXPECT_EQ(load_spec(d.file("rbln.json", spec_to_json(spec))), spec);
}

TEST(CdiSpec, LoadErrorsNameTheFile)
{
	TempDir d;
	try {
		load_spec(d.file("bad.yaml", "kind: [unclosed\n"));
		FAIL() << "no error";
	} catch (const std::runtime_error &e) {
		EXPECT_NE(std::string(e.what()).find("bad.yaml:"), std::string::npos) << e.what();
	}
	EXPECT_THROW(load_spec((d.path / "missing.yaml").string()), std::runtime_error);
}

// Each CDI rule both ways: a spec that keeps it and one that breaks it.  The
// cases follow the spec's own examples and the reference implementation.
TEST(CdiValidate, EveryRuleBothWays)
{
	const json good = make_spec({npu(0)}, NameStrategy::index);
	auto node = [](json &s) -> json & { return s["devices"][0]["containerEdits"]["deviceNodes"][0]; };
	struct Case {
		const char *why;
		std::function<void(json &)> edit;
		const char *expect;	// "" : valid
	} cases[] = {
		// versions
		{"no version", [](json &s) { s.erase("cdiVersion"); }, "cdiVersion: missing"},
		{"unknown version", [](json &s) { s["cdiVersion"] = "0.9.0"; }, "'0.9.0' is not a released CDI version"},
		{"not semver", [](json &s) { s["cdiVersion"] = "v1"; }, "'v1' is not a released"},
		{"version 1.0.0", [](json &s) { s["cdiVersion"] = "1.0.0"; }, ""},
		{"version 1.1.0", [](json &s) { s["cdiVersion"] = "1.1.0"; }, ""},
		{"version 1.2.0", [](json &s) { s["cdiVersion"] = "1.2.0"; }, "not a released"},
		{"0.2.0 is below the earliest", [](json &s) { s["cdiVersion"] = "0.2.0"; s["devices"][0]["name"] = "a"; s["devices"][0]["containerEdits"] = {{"env", {"A=1"}}}; s["devices"].erase(1); }, "needs 0.3.0"},
		{"0.3.0 without newer features", [](json &s) { s["cdiVersion"] = "0.3.0"; s["devices"] = {{{"name", "npu"}, {"containerEdits", {{"env", {"A=1"}}}}}}; }, ""},
		{"0.3.0 with hostPath", [](json &s) { s["cdiVersion"] = "0.3.0"; s["devices"][0]["name"] = "a"; s["devices"].erase(1); }, "needs 0.5.0"},
		{"0.4.0 with a digit-first name", [](json &s) { s["cdiVersion"] = "0.4.0"; s["devices"] = {{{"name", "0"}, {"containerEdits", {{"env", {"A=1"}}}}}}; }, "needs 0.5.0"},
		{"0.3.0 with a mount type", [](json &s) { s["cdiVersion"] = "0.3.0"; s["devices"] = {{{"name", "a"}, {"containerEdits", {{"mounts", {{{"hostPath", "tmpfs"}, {"containerPath", "/t"}, {"type", "tmpfs"}}}}}}}}; }, "needs 0.4.0"},
		{"0.5.0 with annotations", [](json &s) { s["annotations"] = {{"a", "b"}}; }, "needs 0.6.0"},
		{"0.6.0 with annotations", [](json &s) { s["cdiVersion"] = "0.6.0"; s["devices"][0]["annotations"] = {{"example.com/x", "y"}}; }, ""},
		{"0.5.0 with a dot in the class", [](json &s) { s["kind"] = "rebellions.ai/npu.v2"; }, "needs 0.6.0"},
		{"0.6.0 with a dot in the class", [](json &s) { s["kind"] = "rebellions.ai/npu.v2"; s["cdiVersion"] = "0.6.0"; }, ""},
		{"0.6.0 with additionalGids", [](json &s) { s["cdiVersion"] = "0.6.0"; s["containerEdits"]["additionalGids"] = {5}; }, "needs 0.7.0"},
		{"0.7.0 with intelRdt", [](json &s) { s["cdiVersion"] = "0.7.0"; s["containerEdits"]["intelRdt"] = {{"closID", "g1"}}; }, ""},
		{"1.0.0 with netDevices", [](json &s) { s["cdiVersion"] = "1.0.0"; s["containerEdits"]["netDevices"] = {{{"hostInterfaceName", "eth1"}, {"name", "net1"}}}; }, "needs 1.1.0"},
		{"1.1.0 with netDevices", [](json &s) { s["cdiVersion"] = "1.1.0"; s["containerEdits"]["netDevices"] = {{{"hostInterfaceName", "eth1"}, {"name", "net1"}}}; }, ""},
		{"1.0.0 with enableMonitoring", [](json &s) { s["cdiVersion"] = "1.0.0"; s["containerEdits"]["intelRdt"] = {{"enableMonitoring", true}}; }, "needs 1.1.0"},
		// kind
		{"kind without class", [](json &s) { s["kind"] = "rebellions.ai"; }, "kind: 'rebellions.ai' is not VENDOR/CLASS"},
		{"class starting with a digit", [](json &s) { s["kind"] = "rebellions.ai/0npu"; }, "class '0npu' must start with a letter"},
		{"vendor starting with a digit", [](json &s) { s["kind"] = "9rebellions.ai/npu"; }, "vendor '9rebellions.ai' must start with a letter"},
		{"vendor in capitals", [](json &s) { s["kind"] = "Rebellions.AI/npu"; }, ""},
		{"vendor with underscore", [](json &s) { s["kind"] = "rebellions_ai/npu"; }, ""},
		{"vendor ending with a dot", [](json &s) { s["kind"] = "rebellions./npu"; }, "must end with a letter or digit"},
		{"two slashes", [](json &s) { s["kind"] = "a.b/c/d"; }, "class 'c/d' has '/'"},
		// fields
		{"unknown field", [](json &s) { s["vendor"] = "x"; }, "vendor: unknown field"},
		{"device unknown field", [](json &s) { s["devices"][0]["path"] = "/dev/x"; }, "devices[0].path: unknown field"},
		{"no devices", [](json &s) { s["devices"] = json::array(); }, "devices: must be a non-empty list"},
		// device names
		{"name with a colon", [](json &s) { s["devices"][0]["name"] = "npu:0"; }, ""},
		{"name ending in a colon", [](json &s) { s["devices"][0]["name"] = "npu:"; }, "'npu:' must start and end"},
		{"name starting with '-'", [](json &s) { s["devices"][0]["name"] = "-0"; }, "devices[0].name: '-0' must start"},
		{"name with '/'", [](json &s) { s["devices"][0]["name"] = "a/b"; }, "has '/'"},
		{"duplicate name", [](json &s) { s["devices"][1]["name"] = "0"; }, "devices[1].name: '0' is defined twice"},
		// edits
		{"missing containerEdits", [](json &s) { s["devices"][0].erase("containerEdits"); }, "devices[0].containerEdits: missing"},
		{"empty containerEdits", [](json &s) { s["devices"][0]["containerEdits"] = json::object(); }, "devices[0].containerEdits: empty"},
		{"only empty lists", [](json &s) { s["devices"][0]["containerEdits"] = {{"env", json::array()}}; }, "devices[0].containerEdits: empty"},
		{"empty permissions", [&](json &s) { node(s)["permissions"] = ""; }, ""},
		{"bad permissions", [&](json &s) { node(s)["permissions"] = "rx"; }, "'rx' may hold only r, w, m"},
		{"type c", [&](json &s) { node(s)["type"] = "c"; }, ""},
		{"bad type", [&](json &s) { node(s)["type"] = "x"; }, "not a device type"},
		{"empty node path", [&](json &s) { node(s)["path"] = ""; }, "deviceNodes[0].path: must not be empty"},
		{"major not a number", [&](json &s) { node(s)["major"] = "1"; }, "major: must be an integer"},
		{"minor -1", [&](json &s) { node(s)["minor"] = -1; }, "minor: -1 is out of range"},
		{"minor 5", [&](json &s) { node(s)["minor"] = 5; }, ""},
		{"uid -1", [&](json &s) { node(s)["uid"] = -1; }, "uid: -1 is out of range"},
		{"env without =", [](json &s) { s["containerEdits"]["env"] = {"FOO"}; }, "containerEdits.env[0]: must be NAME=VALUE"},
		{"env =x", [](json &s) { s["containerEdits"]["env"] = {"=x"}; }, "containerEdits.env[0]: must be NAME=VALUE"},
		{"env A=", [](json &s) { s["containerEdits"]["env"] = {"A="}; }, ""},
		{"createContainer hook", [](json &s) { s["containerEdits"]["hooks"] = {{{"hookName", "createContainer"}, {"path", "/usr/bin/rbln-ctk"}, {"args", {"rbln-ctk", "hook"}}}}; }, ""},
		{"unknown hook", [](json &s) { s["containerEdits"]["hooks"] = {{{"hookName", "later"}, {"path", "/bin/true"}}}; }, "hookName: 'later' is not an OCI hook"},
		{"hook without path", [](json &s) { s["containerEdits"]["hooks"] = {{{"hookName", "poststop"}}}; }, "hooks[0].path: missing"},
		{"tmpfs mount", [](json &s) { s["containerEdits"]["mounts"] = {{{"hostPath", "tmpfs"}, {"containerPath", "/scratch"}, {"type", "tmpfs"}, {"options", {"size=1m"}}}}; }, ""},
		{"mount without target", [](json &s) { s["containerEdits"]["mounts"] = {{{"hostPath", "/x"}}}; }, "mounts[0].containerPath: missing"},
		{"mount options not strings", [](json &s) { s["containerEdits"]["mounts"] = {{{"hostPath", "/x"}, {"containerPath", "/x"}, {"options", {1}}}}; }, "options[0]: must be a string"},
		{"bad closID", [](json &s) { s["cdiVersion"] = "0.7.0"; s["containerEdits"]["intelRdt"] = {{"closID", ".."}}; }, "closID: '..' is not a valid"},
		{"netDevice without name", [](json &s) { s["cdiVersion"] = "1.1.0"; s["containerEdits"]["netDevices"] = {{{"hostInterfaceName", "eth1"}}}; }, "netDevices[0].name: missing"},
		{"negative gid", [](json &s) { s["cdiVersion"] = "0.7.0"; s["containerEdits"]["additionalGids"] = {-1}; }, "additionalGids[0]: must be a group id"},
		// annotations
		{"annotation with prefix", [](json &s) { s["cdiVersion"] = "0.6.0"; s["annotations"] = {{"rebellions.ai/driver", "1.0"}}; }, ""},
		{"bad annotation key", [](json &s) { s["cdiVersion"] = "0.6.0"; s["annotations"] = {{"-bad", "x"}}; }, "annotations.-bad: not a valid key"},
		{"annotation not a string", [](json &s) { s["cdiVersion"] = "0.6.0"; s["annotations"] = {{"a", 1}}; }, "annotations.a: must be a string"},
	};
	for (auto &c : cases) {
		json spec = good;
		c.edit(spec);
		auto problems = validate_spec(spec, false);
		std::string all;
		for (auto &p : problems)
			all += p + "\n";
		if (!*c.expect)
			EXPECT_TRUE(problems.empty()) << c.why << ": should be valid, got\n" << all;
		else
			EXPECT_NE(all.find(c.expect), std::string::npos) << c.why << ": got\n" << all;
	}
}

// The duplicate-key rule is in the reader: YAML forbids them, and so does
// CDI's strict parser.
TEST(CdiValidate, DuplicateKeysAreRefused)
{
	TempDir d;
	const std::string body = "cdiVersion: \"0.5.0\"\nkind: rebellions.ai/npu\n"
				 "devices:\n- name: \"0\"\n  containerEdits:\n    env: [A=1]\n";
	EXPECT_TRUE(validate_spec(load_spec(d.file("ok.yaml", body)), false).empty());
	try {
		load_spec(d.file("dup.yaml", body + "kind: other.com/x\n"));
		FAIL() << "duplicate kind accepted";
	} catch (const std::runtime_error &e) {
		EXPECT_NE(std::string(e.what()).find("dup.yaml:7:1: not valid YAML or JSON: duplicate key 'kind'"),
			  std::string::npos) << e.what();
	}
	EXPECT_THROW(load_spec(d.file("dup.json", R"({"kind": "a/b", "kind": "c/d"})")), std::runtime_error);
	// YAML's booleans are read as booleans, whatever their spelling.
	auto spec = load_spec(d.file("b.yaml", "cdiVersion: 1.1.0\ncontainerEdits:\n  intelRdt:\n    enableMonitoring: True\n"));
	EXPECT_EQ(spec["containerEdits"]["intelRdt"]["enableMonitoring"], true);
}

TEST(CdiValidate, HostCheckWantsCharacterDevices)
{
	json spec = make_spec({npu(0, "/dev/null")}, NameStrategy::index);
	EXPECT_TRUE(validate_spec(spec, true).empty());
	spec = make_spec({npu(0, "/dev/rbln-no-such-node")}, NameStrategy::index);
	auto problems = validate_spec(spec, true);
	ASSERT_FALSE(problems.empty());
	EXPECT_NE(problems[0].find("host device /dev/rbln-no-such-node does not exist"), std::string::npos);
	spec = make_spec({npu(0, "/etc/hostname")}, NameStrategy::index);
	EXPECT_NE(validate_spec(spec, true).at(0).find("not a character device"), std::string::npos);
}

TEST(Request, EnvironmentValues)
{
	EXPECT_FALSE(npus_from_env(kHost, "").has_value());
	EXPECT_FALSE(npus_from_env(kHost, "void").has_value());
	EXPECT_TRUE(npus_from_env(kHost, "none")->empty());
	EXPECT_EQ(npus_from_env(kHost, "all")->size(), 3u);
	auto two = *npus_from_env(kHost, "2, 0");
	ASSERT_EQ(two.size(), 2u);
	EXPECT_EQ(two[0].index, 2u);
	EXPECT_EQ(two[1].index, 0u);
	EXPECT_EQ(npus_from_env(kHost, npu(1).uuid)->at(0).index, 1u);
}

TEST(Request, BadEnvironmentValuesNameTheValue)
{
	for (const char *bad : {"7", "1,1", "1,,2", "gpu0"}) {
		try {
			npus_from_env(kHost, bad);
			FAIL() << bad << " accepted";
		} catch (const Error &e) {
			EXPECT_EQ(e.code(), Errc::invalid_argument) << bad;
			EXPECT_NE(std::string(e.what()).find("RBLN_VISIBLE_DEVICES"), std::string::npos) << e.what();
		}
	}
}

TEST(Request, CdiAnnotations)
{
	EXPECT_EQ(rbln_names_in_cdi_annotations({"rebellions.ai/npu=0, vendor.com/gpu=1", "rebellions.ai/npu=all"}),
		  (std::vector<std::string>{"0", "all"}));
}

TEST(CdiLookup, DeviceEditsComeFromTheSpecOnDisk)
{
	TempDir d;
	d.file("rbln.yaml", spec_to_yaml(make_spec({npu(1, "/dev/null")}, NameStrategy::index)));
	d.file("other.json", R"({"cdiVersion": "0.5.0", "kind": "vendor.com/gpu", "devices": [{"name": "1"}]})");
	::setenv("RBLN_CDI_SPEC_DIRS", (d.path.string() + ":/nonexistent").c_str(), 1);
	json edits = cdi_device_edits("1");
	EXPECT_EQ(edits["device"]["deviceNodes"][1]["path"], "/dev/rbln1");
	try {
		cdi_device_edits("5");
		FAIL();
	} catch (const Error &e) {
		EXPECT_EQ(e.code(), Errc::not_found);
		EXPECT_NE(std::string(e.what()).find("rebellions.ai/npu=5 is not in any spec"), std::string::npos);
	}
	// Applying them gives the nodes and nothing else.
	json config = json::object();
	oci_apply_cdi_edits(config, edits["device"], "rebellions.ai/npu=1");
	EXPECT_EQ(config["linux"]["devices"].size(), 2u);
	EXPECT_THROW(oci_apply_cdi_edits(config, {{"intelRdt", json::object()}}, "x"), Error);
	::unsetenv("RBLN_CDI_SPEC_DIRS");
}

// What the engine already applied (the same CDI device, by podman or a
// containerd with enable_cdi) is not applied twice: once per destination,
// once per hook, nodes and rules once.
TEST(Oci, CdiEditsAreDeduplicated)
{
	json edits = {{"deviceNodes", {{{"path", "/dev/null"}}}},
		      {"mounts", {{{"containerPath", "/usr/bin/rbln-smi"}, {"hostPath", "/usr/local/bin/rbln-smi"}}}},
		      {"hooks", {{{"hookName", "createContainer"}, {"path", "/usr/bin/rbln-ctk"},
				  {"args", {"rbln-ctk", "hook", "update-ldcache"}}}}},
		      {"env", {"RBLN_VISIBLE_DEVICES=1"}}};
	json config = json::object();
	oci_apply_cdi_edits(config, edits, "rebellions.ai/npu=1");
	const json once = config;
	oci_apply_cdi_edits(config, edits, "rebellions.ai/npu=1");
	EXPECT_EQ(config, once) << config.dump(2);
	EXPECT_EQ(config["mounts"].size(), 1u);
	EXPECT_EQ(config["hooks"]["createContainer"].size(), 1u);
	EXPECT_EQ(config["linux"]["devices"].size(), 1u);
	// Another hook (other args) is added; a mount at the same place from elsewhere is replaced.
	edits["hooks"][0]["args"] = {"rbln-ctk", "hook", "other"};
	edits["mounts"][0]["hostPath"] = "/opt/rbln-smi";
	oci_apply_cdi_edits(config, edits, "rebellions.ai/npu=1");
	EXPECT_EQ(config["hooks"]["createContainer"].size(), 2u);
	ASSERT_EQ(config["mounts"].size(), 1u);
	EXPECT_EQ(config["mounts"][0]["source"], "/opt/rbln-smi");
}

TEST(Oci, GiveNpusAddsNodesAndRules)
{
	json config = {{"process", {{"env", {"PATH=/bin", "RBLN_VISIBLE_DEVICES=1"}}}}};
	oci_give_npus(config, {npu(1, "/dev/null")});
	const json &devices = config["linux"]["devices"];
	ASSERT_EQ(devices.size(), 2u);
	EXPECT_EQ(devices[0]["path"], "/dev/null");
	EXPECT_EQ(devices[1]["path"], "/dev/rbln1");
	EXPECT_EQ(devices[1]["type"], "c");
	EXPECT_EQ(devices[1]["major"], 1);
	EXPECT_EQ(devices[1]["minor"], 3);
	// One allow rule per device number, not per path.
	ASSERT_EQ(config["linux"]["resources"]["devices"].size(), 1u);
	EXPECT_EQ(config["linux"]["resources"]["devices"][0]["access"], "rw");
}

TEST(Oci, VisibleDevicesIsRewrittenToWhatTheContainerGot)
{
	json config = {{"process", {{"env", {"PATH=/bin", "RBLN_VISIBLE_DEVICES=all"}}}}};
	oci_set_visible_devices(config, {npu(2, "/dev/null"), npu(0, "/dev/null")});
	EXPECT_EQ(oci_env(config, "RBLN_VISIBLE_DEVICES"), "2,0");
	EXPECT_EQ(config["process"]["env"].size(), 2u);
	EXPECT_EQ(oci_env(config, "PATH"), "/bin");
	oci_set_visible_devices(config, {});
	EXPECT_EQ(oci_env(config, "RBLN_VISIBLE_DEVICES"), "none") << "never empty, which warns";
}

TEST(Oci, MissingNodeChangesNothing)
{
	json config = {{"process", {{"env", {"RBLN_VISIBLE_DEVICES=0,1"}}}}};
	const json before = config;
	EXPECT_THROW(oci_give_npus(config, {npu(0, "/dev/null"), npu(1, "/dev/rbln-missing")}), Error);
	EXPECT_EQ(config, before);
}

TEST(Oci, PrivilegedAndAnnotations)
{
	json config = {{"process", {{"capabilities", {{"bounding", {"CAP_CHOWN"}}}}}},
		       {"annotations", {{"cdi.k8s.io/npu", "rebellions.ai/npu=0"}, {"other", "x"}}}};
	EXPECT_FALSE(oci_privileged(config));
	config["process"]["capabilities"]["bounding"].push_back("CAP_SYS_ADMIN");
	EXPECT_TRUE(oci_privileged(config));
	EXPECT_EQ(oci_cdi_annotations(config), (std::vector<std::string>{"rebellions.ai/npu=0"}));
}

TEST(RuntimeConfig, DockerKeepsSettingsAndIsIdempotent)
{
	TempDir d;
	d.file("etc/docker/daemon.json", R"({"log-level": "warn", "runtimes": {"other": {"path": "/x"}}})");
	RuntimeOptions o{"docker", "/usr/bin/rbln-container-runtime", d.path.string()};
	auto changes = plan_runtime_config(o);
	ASSERT_EQ(changes.size(), 1u);
	apply_change(changes[0]);
	json after = json::parse(read((d.path / "etc/docker/daemon.json").string()));
	EXPECT_EQ(after["log-level"], "warn");
	EXPECT_EQ(after["runtimes"]["other"]["path"], "/x");
	EXPECT_EQ(after["runtimes"]["rbln"]["path"], "/usr/bin/rbln-container-runtime");
	EXPECT_EQ(after["features"]["cdi"], true);
	EXPECT_TRUE(fs::exists(d.path / "etc/docker/daemon.json.rbln-backup"));
	EXPECT_TRUE(plan_runtime_config(o).empty());
}

TEST(RuntimeConfig, RefusesWhatItCannotEditSafely)
{
	TempDir d;
	d.file("etc/docker/daemon.json", "{ not json");
	EXPECT_THROW(plan_runtime_config({"docker", "/s", d.path.string()}), Error);
	for (const char *bad : {"version = 2\nimports = \"/x\"\n", "version = [\n", "[plugins.cri]\nx = 1\n",
				"version = 4\n"}) {
		d.file("etc/containerd/config.toml", bad);
		EXPECT_THROW(plan_runtime_config({"containerd", "/s", d.path.string()}), Error) << bad;
		EXPECT_EQ(read((d.path / "etc/containerd/config.toml").string()), bad);
	}
	d.file("etc/containerd/config.toml", "version = [\n");
	try {
		plan_runtime_config({"containerd", "/s", d.path.string()});
	} catch (const Error &e) {
		EXPECT_NE(std::string(e.what()).find("config.toml:1:"), std::string::npos) << e.what();
		EXPECT_NE(std::string(e.what()).find("not valid TOML"), std::string::npos) << e.what();
	}
	EXPECT_THROW(plan_runtime_config({"lxc", "/s", d.path.string()}), Error);
}

namespace {

toml::table parse_toml(const std::string &text) { return toml::parse(text); }

// Plans and applies the containerd configuration under @d; the drop-in and
// config.toml as toml++ reads them back.
std::pair<toml::table, toml::table> configure_containerd(const TempDir &d, bool set_as_default = false)
{
	RuntimeOptions o{"containerd", "/opt/shim", d.path.string(), set_as_default};
	for (auto &c : plan_runtime_config(o))
		apply_change(c);
	EXPECT_TRUE(plan_runtime_config(o).empty()) << "not idempotent";
	return {parse_toml(read((d.path / "etc/containerd/conf.d/99-rbln.toml").string())),
		parse_toml(read((d.path / "etc/containerd/config.toml").string()))};
}

} // namespace

TEST(RuntimeConfig, ContainerdVersion2Layout)
{
	TempDir d;
	d.file("etc/containerd/config.toml", "# mine\nversion = 2\n[plugins.\"io.containerd.grpc.v1.cri\"]\n"
					     "  sandbox_image = \"pause:3.9\"\n");
	auto [dropin, main] = configure_containerd(d);
	EXPECT_EQ(dropin["version"].value_or(0), 2);
	auto cri = dropin["plugins"]["io.containerd.grpc.v1.cri"];
	EXPECT_EQ(cri["enable_cdi"].value_or(false), true);
	EXPECT_EQ(cri["containerd"]["runtimes"]["rbln"]["options"]["BinaryName"].value_or(""), std::string("/opt/shim"));
	EXPECT_EQ(cri["containerd"]["runtimes"]["rbln"]["runtime_type"].value_or(""), std::string("io.containerd.runc.v2"));
	EXPECT_FALSE(cri["containerd"]["default_runtime_name"]);
	// The device plugin's CDI annotation is let through to the shim.
	for (const char *k : {"pod_annotations", "container_annotations"})
		EXPECT_EQ(cri["containerd"]["runtimes"]["rbln"][k][0].value_or(""), std::string("cdi.k8s.io/*")) << k;
	// containerd replaces config.toml's CRI section with the drop-in's: the
	// drop-in carries config.toml's settings, and runc, which 1.6 needs.
	EXPECT_EQ(cri["sandbox_image"].value_or(""), std::string("pause:3.9"));
	EXPECT_EQ(cri["containerd"]["runtimes"]["runc"]["runtime_type"].value_or(""), std::string("io.containerd.runc.v2"));
	// config.toml keeps its settings and imports the drop-ins.
	EXPECT_EQ(main["version"].value_or(0), 2);
	EXPECT_EQ(main["plugins"]["io.containerd.grpc.v1.cri"]["sandbox_image"].value_or(""), std::string("pause:3.9"));
	EXPECT_EQ(main["imports"][0].value_or(""), std::string("/etc/containerd/conf.d/*.toml"));
	EXPECT_TRUE(fs::exists(d.path / "etc/containerd/config.toml.rbln-backup"));
}

TEST(RuntimeConfig, ContainerdVersion3LayoutAndDefault)
{
	TempDir d;
	d.file("etc/containerd/config.toml", "version = 3\nimports = [\"/opt/other/*.toml\"]\n");
	auto [dropin, main] = configure_containerd(d, /*set_as_default=*/true);
	EXPECT_EQ(dropin["version"].value_or(0), 3);
	EXPECT_FALSE(dropin["plugins"]["io.containerd.grpc.v1.cri"]) << "v2 layout in a v3 drop-in";
	auto cri = dropin["plugins"]["io.containerd.cri.v1.runtime"];
	EXPECT_EQ(cri["enable_cdi"].value_or(false), true);
	EXPECT_EQ(cri["cdi_spec_dirs"][1].value_or(""), std::string("/var/run/cdi"));
	EXPECT_EQ(cri["containerd"]["default_runtime_name"].value_or(""), std::string("rbln"));
	EXPECT_EQ(cri["containerd"]["runtimes"]["rbln"]["options"]["BinaryName"].value_or(""), std::string("/opt/shim"));
	// An existing imports list is extended, not replaced.
	ASSERT_EQ(main["imports"].as_array()->size(), 2u);
	EXPECT_EQ(main["imports"][0].value_or(""), std::string("/opt/other/*.toml"));
	EXPECT_EQ(main["imports"][1].value_or(""), std::string("/etc/containerd/conf.d/*.toml"));
}

// config.toml's own runc (systemd cgroups) and other runtimes survive in the
// drop-in, which replaces that section when containerd imports it.
TEST(RuntimeConfig, ContainerdDropInKeepsTheConfigsRuntimes)
{
	TempDir d;
	d.file("etc/containerd/config.toml", "version = 2\n[plugins.\"io.containerd.grpc.v1.cri\".containerd]\n"
					     "default_runtime_name = \"crun\"\n"
					     "[plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.crun]\n"
					     "runtime_type = \"io.containerd.runc.v2\"\n"
					     "[plugins.\"io.containerd.grpc.v1.cri\".containerd.runtimes.runc.options]\n"
					     "SystemdCgroup = true\n");
	auto [dropin, main] = configure_containerd(d);
	auto ctrd = dropin["plugins"]["io.containerd.grpc.v1.cri"]["containerd"];
	EXPECT_EQ(ctrd["default_runtime_name"].value_or(""), std::string("crun"));
	EXPECT_EQ(ctrd["runtimes"]["crun"]["runtime_type"].value_or(""), std::string("io.containerd.runc.v2"));
	EXPECT_EQ(ctrd["runtimes"]["runc"]["options"]["SystemdCgroup"].value_or(false), true);
	EXPECT_FALSE(ctrd["runtimes"]["runc"]["runtime_type"]) << "config.toml's runc is kept as it is";
	EXPECT_EQ(ctrd["runtimes"]["rbln"]["options"]["BinaryName"].value_or(""), std::string("/opt/shim"));
}

TEST(RuntimeConfig, ContainerdWithoutConfigGetsVersion2)
{
	TempDir d;
	auto [dropin, main] = configure_containerd(d);
	EXPECT_EQ(dropin["version"].value_or(0), 2);
	EXPECT_EQ(main["version"].value_or(0), 2);
	EXPECT_EQ(main["imports"][0].value_or(""), std::string("/etc/containerd/conf.d/*.toml"));
	// Already importing: config.toml is not touched at all.
	TempDir e;
	const std::string mine = "# keep me\nversion = 3\nimports = [\"/etc/containerd/conf.d/*.toml\"]\n";
	e.file("etc/containerd/config.toml", mine);
	configure_containerd(e);
	EXPECT_EQ(read((e.path / "etc/containerd/config.toml").string()), mine);
}

// --config: a config.toml elsewhere (the VM's containerd runs on one in /tmp)
// gets its drop-in in conf.d/ beside it, imported by that absolute path;
// daemon.json likewise; engines configured by drop-in directories refuse it.
TEST(RuntimeConfig, ConfigAtAnotherPath)
{
	TempDir d;
	const std::string config = d.file("engine/config.toml", "version = 2\nroot = \"/tmp/x/root\"\n");
	RuntimeOptions o{"containerd", "/opt/shim", "/", false, config};
	auto plan = plan_runtime_config(o);
	ASSERT_EQ(plan.size(), 2u);
	EXPECT_EQ(plan[0].path, (d.path / "engine/conf.d/99-rbln.toml").string());
	EXPECT_EQ(plan[1].path, config);
	for (auto &c : plan)
		apply_change(c);
	auto main = parse_toml(read(config));
	EXPECT_EQ(main["imports"][0].value_or(""), (d.path / "engine/conf.d/*.toml").string());
	EXPECT_EQ(main["root"].value_or(""), std::string("/tmp/x/root"));
	EXPECT_TRUE(plan_runtime_config(o).empty()) << "not idempotent";

	auto docker = plan_runtime_config({"docker", "/opt/shim", "/", false, (d.path / "daemon.json").string()});
	ASSERT_EQ(docker.size(), 1u);
	EXPECT_EQ(docker[0].path, (d.path / "daemon.json").string());

	for (const char *engine : {"crio", "podman"}) {
		try {
			plan_runtime_config({engine, "/opt/shim", "/", false, config});
			ADD_FAILURE() << engine << " took --config";
		} catch (const Error &e) {
			EXPECT_NE(std::string(e.what()).find("--config " + config), std::string::npos) << e.what();
			EXPECT_NE(std::string(e.what()).find("use --root"), std::string::npos) << e.what();
		}
	}
}

TEST(RuntimeConfig, CrioAndPodmanDropIns)
{
	TempDir d;
	auto crio = plan_runtime_config({"crio", "/opt/shim", d.path.string()});
	ASSERT_EQ(crio.size(), 1u);
	EXPECT_EQ(crio[0].path, (d.path / "etc/crio/crio.conf.d/99-rbln.conf").string());
	EXPECT_EQ(parse_toml(crio[0].after)["crio"]["runtime"]["runtimes"]["rbln"]["runtime_path"].value_or(""),
		  std::string("/opt/shim"));
	auto podman = plan_runtime_config({"podman", "/opt/shim", d.path.string(), true});
	ASSERT_EQ(podman.size(), 1u);
	const toml::table conf = parse_toml(podman[0].after);
	auto engine = conf["engine"];
	EXPECT_EQ(engine["runtimes"]["rbln"][0].value_or(""), std::string("/opt/shim"));
	EXPECT_EQ(engine["runtime"].value_or(""), std::string("rbln"));
	EXPECT_EQ(engine["cdi_spec_dirs"][0].value_or(""), std::string("/etc/cdi"));
}

TEST(ToolkitConfig, ReadsSettingsAndNamesBadKeys)
{
	TempDir d;
	::setenv("RBLN_CTK_CONFIG", d.file("c.yaml", "runtime: crun\naccept-env-unprivileged: true\n").c_str(), 1);
	auto c = ToolkitConfig::load();
	EXPECT_TRUE(c.found);
	EXPECT_EQ(c.runtime, "crun");
	EXPECT_TRUE(c.accept_env_unprivileged);
	::setenv("RBLN_CTK_CONFIG", d.file("bad.yaml", "runtim: crun\n").c_str(), 1);
	try {
		ToolkitConfig::load();
		FAIL();
	} catch (const Error &e) {
		EXPECT_NE(std::string(e.what()).find("unknown setting 'runtim'"), std::string::npos);
	}
	::setenv("RBLN_CTK_CONFIG", d.file("bad2.yaml", "accept-env-unprivileged: maybe\n").c_str(), 1);
	try {
		ToolkitConfig::load();
		FAIL();
	} catch (const Error &e) {
		EXPECT_NE(std::string(e.what()).find("'maybe' is not a YAML boolean"), std::string::npos) << e.what();
	}
	// YAML's booleans, in YAML's spellings.
	for (auto [text, value] : {std::pair{"True", true}, std::pair{"TRUE", true}, std::pair{"yes", true},
				   std::pair{"on", true}, std::pair{"False", false}, std::pair{"no", false}}) {
		::setenv("RBLN_CTK_CONFIG", d.file("b.yaml", std::string("accept-env-unprivileged: ") + text + "\n").c_str(), 1);
		EXPECT_EQ(ToolkitConfig::load().accept_env_unprivileged, value) << text;
	}
	::setenv("RBLN_CTK_CONFIG", (d.path / "absent.yaml").c_str(), 1);
	EXPECT_FALSE(ToolkitConfig::load().found);
	::unsetenv("RBLN_CTK_CONFIG");
}

TEST(CdiSpecFile, RefreshWritesOnlyChangesUnderALock)
{
	TempDir d;
	const std::string path = (d.path / "cdi/rbln.yaml").string();
	SpecLock lock(path);
	EXPECT_TRUE(fs::exists(path + ".lock"));
	EXPECT_TRUE(write_file_if_changed(path, "a\n"));
	auto first = fs::last_write_time(path);
	EXPECT_FALSE(write_file_if_changed(path, "a\n"));
	EXPECT_EQ(fs::last_write_time(path), first);
	EXPECT_TRUE(write_file_if_changed(path, "b\n"));
	EXPECT_EQ(read(path), "b\n");
}

// What the shim reads for commands other than create and run: what it can,
// never an error.
TEST(ToolkitConfig, LenientLoadKeepsTheRuntimeAndSaysWhatItSkipped)
{
	TempDir d;
	::setenv("RBLN_CTK_CONFIG", d.file("c.yaml", "runtime: crun\naccept-env-unprivileged: maybe\nx: 1\n").c_str(), 1);
	EXPECT_THROW(ToolkitConfig::load(), Error);
	auto c = ToolkitConfig::load_lenient();
	EXPECT_EQ(c.runtime, "crun");
	EXPECT_FALSE(c.accept_env_unprivileged);
	ASSERT_EQ(c.skipped.size(), 2u);
	EXPECT_NE(c.skipped[0].find("'maybe'"), std::string::npos);
	::setenv("RBLN_CTK_CONFIG", d.file("g.yaml", "runtime: [unclosed\n").c_str(), 1);
	c = ToolkitConfig::load_lenient();
	EXPECT_TRUE(c.runtime.empty());
	EXPECT_EQ(c.skipped.size(), 1u);
	::unsetenv("RBLN_CTK_CONFIG");
}

TEST(ShimArgs, CommandAndBundleAmongRuncsOptions)
{
	struct Case {
		std::vector<const char *> args;
		const char *command, *bundle;
	} cases[] = {
		{{"--root", "/run/x", "--log", "/l", "create", "--bundle", "/b", "id"}, "create", "/b"},
		{{"--debug", "--systemd-cgroup", "run", "-b", "/b2", "--detach", "id"}, "run", "/b2"},
		{{"create", "--console-socket", "/s", "--bundle=/b3", "--pid-file", "/p", "id"}, "create", "/b3"},
		{{"create", "id"}, "create", "."},
		{{"--root", "/r", "delete", "--force", "id"}, "delete", "."},
		{{"--log-format", "json", "state", "id"}, "state", "."},
		{{"--version"}, "", "."},
	};
	for (auto &c : cases) {
		std::vector<const char *> argv = {"rbln-container-runtime"};
		argv.insert(argv.end(), c.args.begin(), c.args.end());
		auto inv = parse_shim_args(int(argv.size()), argv.data());
		EXPECT_EQ(inv.command, c.command) << c.args[0];
		EXPECT_EQ(inv.bundle, c.bundle) << c.args[0];
	}
	std::vector<const char *> missing = {"rbln-container-runtime", "--root"};
	EXPECT_THROW(parse_shim_args(2, missing.data()), CLI::ParseError);
}

// crun's --log-level takes a value: known, its value is not the command.
// An option the shim does not know, before the command, is refused by
// name (before, "x" of "--frobnicate x" was taken for the command and
// nothing was injected, silently).
TEST(ShimArgs, UnknownGlobalOptionsAreRefusedNamed)
{
	std::vector<const char *> crun = {"rbln-container-runtime", "--log-level", "debug", "create", "-b", "/b", "id"};
	auto inv = parse_shim_args(int(crun.size()), crun.data());
	EXPECT_EQ(inv.command, "create");
	EXPECT_EQ(inv.bundle, "/b");
	std::vector<const char *> unknown = {"rbln-container-runtime", "--frobnicate", "x", "create", "-b", "/b", "id"};
	try {
		parse_shim_args(int(unknown.size()), unknown.data());
		ADD_FAILURE() << "took an unknown global option";
	} catch (const CLI::ParseError &e) {
		EXPECT_NE(std::string(e.what()).find("'--frobnicate'"), std::string::npos) << e.what();
		EXPECT_NE(std::string(e.what()).find("--log-level VALUE"), std::string::npos) << e.what();
	}
}
