// The container toolkit's logic: CDI specs, requests, OCI edits, runtime
// configuration and settings.  Device nodes are stood in for by /dev/null.
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "cdi.hpp"
#include "oci.hpp"
#include "request.hpp"
#include "runtime_config.hpp"
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

TEST(CdiValidate, EveryRuleNamesWhereAndWhat)
{
	const json good = make_spec({npu(0)}, NameStrategy::index);
	struct Case {
		const char *why;
		std::function<void(json &)> edit;
		const char *expect;
	} cases[] = {
		{"no version", [](json &s) { s.erase("cdiVersion"); }, "cdiVersion: missing"},
		{"unknown version", [](json &s) { s["cdiVersion"] = "0.9.1"; }, "not a released CDI version"},
		{"not semver", [](json &s) { s["cdiVersion"] = "v1"; }, "'v1' is not a released"},
		{"too low for hostPath", [](json &s) { s["cdiVersion"] = "0.3.0"; }, "too low for the features used (needs 0.5.0)"},
		{"kind without class", [](json &s) { s["kind"] = "rebellions.ai"; }, "kind: 'rebellions.ai' is not VENDOR/CLASS"},
		{"kind bad vendor", [](json &s) { s["kind"] = "Rebellions_AI/npu"; }, "is not VENDOR/CLASS"},
		{"kind two slashes", [](json &s) { s["kind"] = "a.b/c/d"; }, "is not VENDOR/CLASS"},
		{"unknown field", [](json &s) { s["vendor"] = "x"; }, "vendor: unknown field"},
		{"no devices", [](json &s) { s["devices"] = json::array(); }, "devices: must be a non-empty list"},
		{"bad name", [](json &s) { s["devices"][0]["name"] = "-0"; }, "devices[0].name: '-0' must start"},
		{"duplicate name", [](json &s) { s["devices"][1]["name"] = "0"; }, "devices[1].name: '0' is defined twice"},
		{"device unknown field", [](json &s) { s["devices"][0]["path"] = "/dev/x"; }, "devices[0].path: unknown field"},
		{"relative node", [](json &s) { s["devices"][0]["containerEdits"]["deviceNodes"][0]["path"] = "dev/x"; },
		 "deviceNodes[0].path: 'dev/x' must be an absolute path"},
		{"bad permissions", [](json &s) { s["devices"][0]["containerEdits"]["deviceNodes"][0]["permissions"] = "rx"; },
		 "'rx' must be one or more of r, w, m"},
		{"bad type", [](json &s) { s["devices"][0]["containerEdits"]["deviceNodes"][0]["type"] = "x"; }, "not a device type"},
		{"major not a number", [](json &s) { s["devices"][0]["containerEdits"]["deviceNodes"][0]["major"] = "1"; },
		 "major: must be an integer"},
		{"env without =", [](json &s) { s["containerEdits"]["env"] = {"FOO"}; }, "containerEdits.env[0]: must be NAME=VALUE"},
		{"unknown hook", [](json &s) { s["containerEdits"]["hooks"] = {{{"hookName", "later"}, {"path", "/bin/true"}}}; },
		 "hookName: 'later' is not an OCI hook"},
		{"mount without target", [](json &s) { s["containerEdits"]["mounts"] = {{{"hostPath", "/x"}}}; },
		 "mounts[0].containerPath: missing"},
	};
	for (auto &c : cases) {
		json spec = good;
		c.edit(spec);
		auto problems = validate_spec(spec, false);
		std::string all;
		for (auto &p : problems)
			all += p + "\n";
		EXPECT_NE(all.find(c.expect), std::string::npos) << c.why << ": got\n" << all;
	}
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
	EXPECT_THROW(oci_apply_cdi_edits(config, {{"hooks", json::array()}}, "x"), Error);
	::unsetenv("RBLN_CDI_SPEC_DIRS");
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
	d.file("etc/containerd/config.toml", "version = 2\nimports = [\"/opt/other/*.toml\"]\n");
	try {
		plan_runtime_config({"containerd", "/s", d.path.string()});
		FAIL();
	} catch (const Error &e) {
		EXPECT_NE(std::string(e.what()).find("has an imports list without"), std::string::npos);
	}
	EXPECT_THROW(plan_runtime_config({"lxc", "/s", d.path.string()}), Error);
}

TEST(RuntimeConfig, ContainerdImportsTheDropIn)
{
	TempDir d;
	d.file("etc/containerd/config.toml", "version = 2\n[plugins]\n");
	auto changes = plan_runtime_config({"containerd", "/opt/shim", d.path.string()});
	ASSERT_EQ(changes.size(), 2u);
	EXPECT_NE(changes[0].after.find("BinaryName = \"/opt/shim\""), std::string::npos);
	EXPECT_NE(changes[0].after.find("enable_cdi = true"), std::string::npos);
	EXPECT_EQ(changes[1].after.rfind("imports = [\"/etc/containerd/conf.d/*.toml\"]\n", 0), 0u);
	EXPECT_NE(changes[1].after.find("version = 2\n[plugins]\n"), std::string::npos);
	std::string diff = diff_text(changes[1]);
	EXPECT_NE(diff.find("+imports = "), std::string::npos);
	EXPECT_NE(diff.find(" version = 2"), std::string::npos);
}

TEST(RuntimeConfig, CrioAndPodmanDropIns)
{
	TempDir d;
	auto crio = plan_runtime_config({"crio", "/opt/shim", d.path.string()});
	ASSERT_EQ(crio.size(), 1u);
	EXPECT_EQ(crio[0].path, (d.path / "etc/crio/crio.conf.d/99-rbln.conf").string());
	EXPECT_NE(crio[0].after.find("runtime_path = \"/opt/shim\""), std::string::npos);
	auto podman = plan_runtime_config({"podman", "/opt/shim", d.path.string()});
	ASSERT_EQ(podman.size(), 1u);
	EXPECT_NE(podman[0].after.find("rbln = [\"/opt/shim\"]"), std::string::npos);
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
	EXPECT_THROW(ToolkitConfig::load(), Error);
	::setenv("RBLN_CTK_CONFIG", (d.path / "absent.yaml").c_str(), 1);
	EXPECT_FALSE(ToolkitConfig::load().found);
	::unsetenv("RBLN_CTK_CONFIG");
}
