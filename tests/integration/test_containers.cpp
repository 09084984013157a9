// Containers that see exactly their NPUs: a busybox bundle run by Debian's
// crun through rbln-container-runtime, against the real module.  The host's
// /usr and the build tree are bound in read-only so rbln-smi runs inside.
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include "container_util.h"

using namespace rbln::test;
using json = nlohmann::json;
namespace fs = std::filesystem;

namespace {

std::string env_or(const char *name, const std::string &fallback)
{
	const char *v = std::getenv(name);
	return v && *v ? v : fallback;
}

struct Outcome {
	int exit;
	std::string out;
	json config;		// config.json as the runtime got it
};

class Containers : public ::testing::Test {
protected:
	static inline std::string base_, top_, ctk_dir_, smi_;
	static inline int next_id_ = 0;

	static void SetUpTestSuite()
	{
		top_ = env_or("RBLN_TOP", fs::current_path());
		ctk_dir_ = env_or("RBLN_BUILD", top_ + "/build") + "/cmake/tools/rbln-ctk";
		smi_ = env_or("RBLN_SMI", "rbln-smi");
		char tmpl[] = "/tmp/rbln-ctr-XXXXXX";
		base_ = ::mkdtemp(tmpl);
		fs::path root = fs::path(base_) / "rootfs";
		for (const char *d : {"bin", "dev", "proc", "sys", "tmp", "usr", "etc", "run"})
			fs::create_directories(root / d);
		fs::copy_file("/bin/busybox", root / "bin/busybox");
		fs::create_symlink("busybox", root / "bin/sh");
		fs::create_symlink("usr/lib", root / "lib");
		fs::create_symlink("usr/lib64", root / "lib64");
		fs::create_directories(root / top_.substr(1));
		ASSERT_EQ(run_shell("cd " + base_ + " && crun spec").exit, 0) << "crun spec";
		write_settings("runtime: crun\n");
	}

	static void TearDownTestSuite() { fs::remove_all(base_); }

	static void write_settings(const std::string &yaml)
	{
		std::ofstream(base_ + "/ctk.yaml") << yaml;
	}

	static json base_config(const std::string &script)
	{
		std::ifstream in(base_ + "/config.json.orig");
		if (!in) {
			fs::copy_file(base_ + "/config.json", base_ + "/config.json.orig");
			in.open(base_ + "/config.json.orig");
		}
		json c = json::parse(in);
		c["root"] = {{"path", base_ + "/rootfs"}, {"readonly", false}};
		c["process"]["terminal"] = false;
		c["process"]["args"] = {"/bin/sh", "-c", script};
		c["process"]["env"].push_back("RBLN_SMI=" + smi_);
		for (const std::string &dir : {std::string("/usr"), top_})
			c["mounts"].push_back({{"destination", dir}, {"source", dir}, {"type", "bind"},
					       {"options", {"rbind", "ro"}}});
		return c;
	}

	static void make_privileged(json &c)
	{
		for (const char *set : {"bounding", "effective", "permitted"})
			for (const char *cap : {"CAP_SYS_ADMIN", "CAP_MKNOD"})
				c["process"]["capabilities"][set].push_back(cap);
	}

	// Runs @c through the shim; output of the runtime and the container.
	// @env: more VAR=value words for the shim.
	static Outcome run(const json &c, const std::string &env = "")
	{
		{
			std::ofstream out(base_ + "/config.json");
			out << c.dump(2);
		}
		std::string id = "rbln-test-" + std::to_string(next_id_++);
		auto r = run_shell(env + " RBLN_CTK_CONFIG=" + base_ + "/ctk.yaml " + ctk_dir_ +
				   "/rbln-container-runtime --root " + base_ + "/state run --bundle " +
				   base_ + " " + id + " 2>&1");
		std::ifstream in(base_ + "/config.json");
		return {r.exit, r.out, json::parse(in)};
	}

	// The /dev/rblnN names a container sees, then what rbln-smi lists there.
	static constexpr const char *kLook =
		"ls /dev | grep '^rbln' | tr '\\n' ' '; echo '|'; "
		"$RBLN_SMI --query npu,uuid --format csv,noheader; echo \"smi=$?\"";

	static Outcome look(const std::string &visible, bool privileged = true)
	{
		json c = base_config(kLook);
		c["process"]["env"].push_back("RBLN_VISIBLE_DEVICES=" + visible);
		if (privileged)
			make_privileged(c);
		return run(c);
	}

	// kLook's output for a container given NPU 1 alone: only /dev/rbln1, and
	// rbln-smi inside lists exactly that NPU.
	static void expect_only_npu1(const Outcome &r)
	{
		EXPECT_NE(r.out.find("rbln1 |"), std::string::npos) << r.out;
		EXPECT_EQ(r.out.find("rbln0"), std::string::npos) << r.out;
		EXPECT_NE(r.out.find("1, " + uuid_of(1)), std::string::npos) << r.out;
		EXPECT_EQ(r.out.find("0, " + uuid_of(0)), std::string::npos) << r.out;
		EXPECT_NE(r.out.find("smi=0"), std::string::npos) << r.out;
	}

	static std::string uuid_of(unsigned npu)
	{
		auto dev = sim_device(npu);
		return dev ? read_file(dev->sysfs + "/uuid").value_or("") : "";
	}
};

TEST_F(Containers, OneNpuByIndex)
{
	Outcome r = look("1");
	ASSERT_EQ(r.exit, 0) << r.out;
	expect_only_npu1(r);
	// The container's environment names what it has.
	auto env = r.config["process"]["env"];
	EXPECT_NE(std::find(env.begin(), env.end(), "RBLN_VISIBLE_DEVICES=1"), env.end());
}

TEST_F(Containers, DiagnoseSaysItRunsInAContainer)
{
	json c = base_config("$RBLN_SMI diagnose --json");
	c["process"]["env"].push_back("RBLN_VISIBLE_DEVICES=1");
	make_privileged(c);
	Outcome r = run(c);
	ASSERT_EQ(r.exit, 0) << r.out;
	json report = json::parse(r.out.substr(r.out.find('{')));
	EXPECT_EQ(report["container"]["in_container"], true) << report["container"].dump();
	EXPECT_NE(report["container"]["hints"].dump().find("1 of 2 NPUs in sysfs have no node in /dev"),
		  std::string::npos) << report["container"].dump();
}

TEST_F(Containers, AllNoneAndUuid)
{
	Outcome all = look("all");
	ASSERT_EQ(all.exit, 0) << all.out;
	EXPECT_NE(all.out.find("rbln0 rbln1 |"), std::string::npos) << all.out;

	Outcome none = look("none");
	ASSERT_EQ(none.exit, 0) << none.out;
	EXPECT_EQ(none.out.rfind("|", 0), 0u) << none.out;	// no /dev/rbln*
	EXPECT_EQ(none.out.find("rbln0"), std::string::npos) << none.out;
	EXPECT_EQ(none.out.find(uuid_of(0)), std::string::npos) << none.out;

	Outcome by_uuid = look(uuid_of(0));
	ASSERT_EQ(by_uuid.exit, 0) << by_uuid.out;
	EXPECT_NE(by_uuid.out.find("rbln0 |"), std::string::npos) << by_uuid.out;
	EXPECT_EQ(by_uuid.out.find("rbln1"), std::string::npos) << by_uuid.out;
}

TEST_F(Containers, BadValueFailsTheStartAndChangesNothing)
{
	json c = base_config("echo started");
	c["process"]["env"].push_back("RBLN_VISIBLE_DEVICES=0,7");
	make_privileged(c);
	Outcome r = run(c);
	EXPECT_EQ(r.exit, 2) << "a bad value is a bad argument, as in every tool";
	EXPECT_EQ(r.out.find("started"), std::string::npos) << r.out;
	EXPECT_NE(r.out.find("RBLN_VISIBLE_DEVICES: host id 7 does not exist"), std::string::npos) << r.out;
	EXPECT_EQ(r.config, c) << "config.json was changed";
}

// Nodes of both NPUs are made in the root file system beforehand, the same
// way, so neither needs mknod inside: the granted one opening is the control,
// and the other one's refusal can come from the device cgroup alone.
TEST_F(Containers, UngrantedNodeIsRefusedByTheDeviceCgroup)
{
	const fs::path nodes = fs::path(base_) / "rootfs/nodes";
	fs::create_directories(nodes);
	for (unsigned npu : {0u, 1u}) {
		auto dev = sim_device(npu);
		ASSERT_TRUE(dev);
		struct stat st{};
		ASSERT_EQ(::stat(dev->node.c_str(), &st), 0);
		const fs::path node = nodes / ("npu" + std::to_string(npu));
		fs::remove(node);
		ASSERT_EQ(::mknod(node.c_str(), S_IFCHR | 0666, st.st_rdev), 0) << node << ": " << strerror(errno);
	}
	json c = base_config("for n in 1 0; do (exec 3<>/nodes/npu$n && echo npu$n-opened) 2>&1; done; true");
	c["process"]["env"].push_back("RBLN_VISIBLE_DEVICES=1");
	make_privileged(c);
	Outcome r = run(c);
	fs::remove_all(nodes);
	ASSERT_EQ(r.exit, 0) << r.out;
	EXPECT_NE(r.out.find("npu1-opened"), std::string::npos) << r.out;
	EXPECT_EQ(r.out.find("npu0-opened"), std::string::npos) << r.out;
	EXPECT_NE(r.out.find("Operation not permitted"), std::string::npos) << r.out;
}

TEST_F(Containers, EnvironmentNeedsPrivilegeUnlessAllowed)
{
	Outcome r = look("1", /*privileged=*/false);
	ASSERT_EQ(r.exit, 0) << r.out;
	EXPECT_NE(r.out.find("ignoring RBLN_VISIBLE_DEVICES=1"), std::string::npos) << r.out;
	EXPECT_EQ(r.out.find("rbln1"), std::string::npos) << r.out;

	write_settings("runtime: crun\naccept-env-unprivileged: true\n");
	r = look("1", false);
	write_settings("runtime: crun\n");
	ASSERT_EQ(r.exit, 0) << r.out;
	EXPECT_NE(r.out.find("rbln1 |"), std::string::npos) << r.out;
}

// The spec rbln-ctk writes, read back by the shim as a CDI consumer.
TEST_F(Containers, CdiSpecGeneratedValidatedAndConsumed)
{
	auto gen = run_shell(ctk_dir_ + "/rbln-ctk cdi generate 2>&1");
	ASSERT_EQ(gen.exit, 0) << gen.out;
	auto val = run_shell(ctk_dir_ + "/rbln-ctk cdi validate 2>&1");
	EXPECT_EQ(val.exit, 0) << val.out;
	EXPECT_NE(val.out.find("valid (cdiVersion 0.5.0, kind rebellions.ai/npu"), std::string::npos) << val.out;
	auto list = run_shell(ctk_dir_ + "/rbln-ctk cdi list 2>&1");
	EXPECT_NE(list.out.find("rebellions.ai/npu=0\n"), std::string::npos) << list.out;
	EXPECT_NE(list.out.find("rebellions.ai/npu=" + uuid_of(1) + "\n"), std::string::npos) << list.out;
	EXPECT_NE(list.out.find("rebellions.ai/npu=all\n"), std::string::npos) << list.out;
	auto info = run_shell(ctk_dir_ + "/rbln-ctk info --json 2>&1");
	EXPECT_EQ(json::parse(info.out)["cdi_spec"]["up_to_date"], true) << info.out;

	// Unprivileged: CDI annotations always work.
	json c = base_config(kLook);
	c["annotations"]["cdi.k8s.io/rbln"] = "rebellions.ai/npu=" + uuid_of(1);
	Outcome r = run(c);
	ASSERT_EQ(r.exit, 0) << r.out;
	EXPECT_NE(r.out.find("rbln1 |"), std::string::npos) << r.out;
	EXPECT_NE(r.out.find("1, " + uuid_of(1)), std::string::npos) << r.out;

	c["annotations"]["cdi.k8s.io/rbln"] = "rebellions.ai/npu=9";
	r = run(c);
	EXPECT_EQ(r.exit, 5) << "no such NPU";
	EXPECT_NE(r.out.find("rebellions.ai/npu=9 is not in any spec"), std::string::npos) << r.out;
	fs::remove("/var/run/cdi/rbln.yaml");
}

// A bad settings file fails a start, but never blocks the rest of a
// container's life: delete --force of a created container still works.
TEST_F(Containers, BrokenSettingsDoNotBlockDelete)
{
	json c = base_config("sleep 30");
	{
		std::ofstream out(base_ + "/config.json");
		out << c.dump(2);
	}
	const std::string shim = "RBLN_CTK_CONFIG=" + base_ + "/ctk.yaml " + ctk_dir_ +
				 "/rbln-container-runtime --root " + base_ + "/state ";
	// A created container's init keeps its stdio: a file, not our pipe.
	auto create = [&](const std::string &id) {
		return run_shell(shim + "create --bundle " + base_ + " " + id + " >" + base_ +
				 "/create.log 2>&1 </dev/null; r=$?; cat " + base_ + "/create.log; exit $r");
	};
	auto created = create("rbln-doomed");
	ASSERT_EQ(created.exit, 0) << created.out;
	write_settings("runtime: crun\naccept-env-unprivileged: maybe\nbogus: 1\n");

	auto start = create("rbln-refused");
	EXPECT_NE(start.exit, 0) << start.out;
	EXPECT_NE(start.out.find("'maybe' is not a YAML boolean"), std::string::npos) << start.out;

	auto del = run_shell(shim + "delete --force rbln-doomed 2>&1");
	write_settings("runtime: crun\n");
	EXPECT_EQ(del.exit, 0) << del.out;
	EXPECT_NE(del.out.find("warning: ignoring"), std::string::npos) << del.out;
	auto state = run_shell("crun --root " + base_ + "/state state rbln-doomed 2>&1");
	EXPECT_NE(state.exit, 0) << "still there: " << state.out;
}

// Bookworm's udevadm loses its control connection on Debian's 7.x kernel
// ("Failed to wait for daemon to reply: Broken pipe") while udevd keeps
// working; SIGHUP makes udevd reload its rules just the same.
constexpr const char *kReloadUdevRules =
	"{ udevadm control --reload 2>/dev/null || pkill -HUP -x systemd-udevd; }";

// udev keeps the spec current: the rule (with this tree's rbln-ctk) rewrites
// it when a simulated NPU is hot-added, and again when it goes.
TEST_F(Containers, SpecFollowsHotplugThroughUdev)
{
	const std::string rule = "/etc/udev/rules.d/71-rbln-cdi.rules";
	ASSERT_EQ(run_shell("sed 's|/usr/bin/rbln-ctk|" + ctk_dir_ + "/rbln-ctk|' " + top_ +
			    "/udev/71-rbln-cdi.rules > " + rule + " && " + kReloadUdevRules).exit, 0);
	fs::remove("/var/run/cdi/rbln.yaml");
	auto list = [&] { return run_shell(ctk_dir_ + "/rbln-ctk cdi list 2>&1").out; };

	ASSERT_EQ(sim_new_device("2 atom"), 0);
	run_shell("udevadm settle --timeout=60");
	std::string with = list();
	EXPECT_NE(with.find("rebellions.ai/npu=2\n"), std::string::npos) << with;
	EXPECT_NE(with.find("rebellions.ai/npu=0\n"), std::string::npos) << with;
	auto val = run_shell(ctk_dir_ + "/rbln-ctk cdi validate 2>&1");
	EXPECT_EQ(val.exit, 0) << val.out;

	ASSERT_EQ(sim_del_device(2), 0);
	run_shell("udevadm settle --timeout=60");
	std::string without = list();
	EXPECT_EQ(without.find("rebellions.ai/npu=2\n"), std::string::npos) << without;
	EXPECT_NE(without.find("rebellions.ai/npu=1\n"), std::string::npos) << without;
	// No temporary files or lock holders left behind in the CDI directory
	// but the lock file itself.
	for (const auto &e : fs::directory_iterator("/var/run/cdi"))
		EXPECT_TRUE(e.path().filename() == "rbln.yaml" || e.path().filename() == "rbln.yaml.lock")
			<< e.path();

	fs::remove(rule);
	run_shell(kReloadUdevRules);
	fs::remove("/var/run/cdi/rbln.yaml");
}

// A bare image (busybox and glibc, no rbln files, no host /usr) given NPU 1
// through CDI: the spec's mounts bring rbln-smi, librbln_devmgr.so.0 and
// their libraries, and its createContainer hook (rbln-ctk hook
// update-ldcache) lets the loader find them.
TEST_F(Containers, BareImageGetsTheLibraryAndRblnSmi)
{
	const fs::path bare = fs::path(base_) / "bare";
	make_bare_rootfs(bare);
	const std::string cdi_dir = base_ + "/cdi";
	const std::string build = cmake_build_dir();
	auto gen = generate_injected_spec(cdi_dir + "/rbln.yaml");
	ASSERT_EQ(gen.exit, 0) << gen.out;
	EXPECT_EQ(gen.out.find("warning"), std::string::npos) << gen.out;
	auto val = run_shell(ctk_dir_ + "/rbln-ctk cdi validate " + cdi_dir + "/rbln.yaml 2>&1");
	EXPECT_EQ(val.exit, 0) << val.out;

	json c = base_config("ls /dev | grep '^rbln' | tr '\\n' ' '; echo '|'; "
			     "/usr/bin/rbln-smi --query npu,uuid --format csv,noheader; echo smi=$?; "
			     "/usr/bin/rbln-smi selftest; echo selftest=$?; /probe; echo probe=$?; "
			     "ls /usr/lib/x86_64-linux-gnu/librbln_devmgr.so.0 /etc/ld.so.cache");
	c["root"]["path"] = bare.string();
	for (int i = 0; i < 2; i++)	// no host /usr, no tree: the last two mounts
		c["mounts"].erase(c["mounts"].size() - 1);
	c["mounts"].push_back({{"destination", "/probe"}, {"source", build + "/tests/integration/devmgr_probe"},
			       {"type", "bind"}, {"options", {"bind", "ro"}}});
	c["annotations"]["cdi.k8s.io/rbln"] = "rebellions.ai/npu=1";
	Outcome r = run(c, "RBLN_CDI_SPEC_DIRS=" + cdi_dir);
	ASSERT_EQ(r.exit, 0) << r.out;
	expect_only_npu1(r);
	EXPECT_NE(r.out.find("selftest=0"), std::string::npos) << r.out;
	EXPECT_NE(r.out.find("devmgr: NPU 1 " + uuid_of(1) + " opened"), std::string::npos) << r.out;
	EXPECT_NE(r.out.find("probe=0"), std::string::npos) << r.out;
	// The hook is in the container's config, from the spec.
	EXPECT_EQ(r.config["hooks"]["createContainer"][0]["args"][2], "update-ldcache") << r.config.dump();
}

// A container given one node of NPU 1 and nothing else, as `docker run
// --device` does (straight through crun: no shim adds the others): the
// accel (render on 6.1) node alone, or /dev/rbln1 alone.  Listing, opening,
// registering and rbln-smi all use the node that is there.
TEST_F(Containers, OneNodeOfTheNpuIsEnough)
{
	auto npu1 = sim_device(1);
	ASSERT_TRUE(npu1);
	struct stat st{};
	ASSERT_EQ(::stat(npu1->node.c_str(), &st), 0);
	const std::string build = cmake_build_dir();
	for (const std::string &given : {npu1->node, std::string("/dev/rbln1")}) {
		SCOPED_TRACE(given);
		json c = base_config("ls /dev/accel /dev/dri /dev/rbln1 2>/dev/null | tr '\\n' ' '; echo '|'; "
				     "LD_LIBRARY_PATH=" + build + "/libdevmgr " + build +
				     "/tests/integration/devmgr_probe; echo probe=$?; "
				     "$RBLN_SMI --query npu,uuid --format csv,noheader; echo smi=$?");
		c["linux"]["devices"] = {{{"path", given}, {"type", "c"}, {"major", major(st.st_rdev)},
					  {"minor", minor(st.st_rdev)}, {"fileMode", 0660}, {"uid", 0}, {"gid", 0}}};
		c["linux"]["resources"]["devices"].push_back({{"allow", true}, {"type", "c"},
							      {"major", major(st.st_rdev)},
							      {"minor", minor(st.st_rdev)}, {"access", "rwm"}});
		{
			std::ofstream out(base_ + "/config.json");
			out << c.dump(2);
		}
		auto r = run_shell("crun --root " + base_ + "/state run --bundle " + base_ + " rbln-one-node-" +
				   std::to_string(next_id_++) + " 2>&1");
		ASSERT_EQ(r.exit, 0) << r.out;
		const std::string dev_listing = r.out.substr(0, r.out.find('|'));
		EXPECT_EQ(dev_listing.find(given == npu1->node ? "rbln1" : "accel"), std::string::npos)
			<< "only " << given << " is there: " << r.out;
		EXPECT_NE(r.out.find("devmgr: NPU 1 " + uuid_of(1) + " opened"), std::string::npos) << r.out;
		EXPECT_NE(r.out.find("devmgr: rbln:0 registered"), std::string::npos) << r.out;
		EXPECT_NE(r.out.find("probe=0"), std::string::npos) << r.out;
		EXPECT_NE(r.out.find("1, " + uuid_of(1) + "\n"), std::string::npos) << r.out;
		EXPECT_NE(r.out.find("smi=0"), std::string::npos) << r.out;
	}
}

// One vocabulary for RBLN_VISIBLE_DEVICES: whatever path the NPUs came by,
// the variable inside names exactly them (or "none"), and rbln-smi -g there
// gives a working plan without a warning.
TEST_F(Containers, EveryPathGivesAWorkingPlan)
{
	auto gen = run_shell(ctk_dir_ + "/rbln-ctk cdi generate 2>&1");
	ASSERT_EQ(gen.exit, 0) << gen.out;
	struct Path {
		const char *name;
		const char *cdi;	// rebellions.ai/npu=<cdi>, or none
		const char *env;	// RBLN_VISIBLE_DEVICES, or unset
		bool privileged;
		const char *inside;	// RBLN_VISIBLE_DEVICES in the container
		std::vector<std::string> plan;	// rows, spaces squeezed
	};
	const Path paths[] = {
		{"CDI only", "1", nullptr, false, "1", {"0 | 1 | Active"}},
		{"env only", nullptr, "1", true, "1", {"0 | 1 | Active"}},
		{"both", "0", "1", true, "0,1", {"0 | 0 | Active", "1 | 1 | Active"}},
		{"unprivileged: env ignored, CDI kept", "1", "all", false, "1", {"0 | 1 | Active"}},
		{"none", nullptr, "none", true, "none", {}},
		{"all", nullptr, "all", true, "0,1", {"0 | 0 | Active", "1 | 1 | Active"}},
		{"CDI all, env all, unprivileged", "all", "all", false, "0,1",
		 {"0 | 0 | Active", "1 | 1 | Active"}},
	};
	auto squeeze = [](std::string s) {
		std::string out;
		for (char ch : s)
			if (ch != ' ' || out.empty() || out.back() != ' ')
				out += ch;
		return out;
	};
	for (const auto &p : paths) {
		SCOPED_TRACE(p.name);
		json c = base_config("echo \"inside=$RBLN_VISIBLE_DEVICES\"; $RBLN_SMI -g 2>&1; echo \"g=$?\"");
		if (p.cdi)
			c["annotations"]["cdi.k8s.io/rbln"] = std::string("rebellions.ai/npu=") + p.cdi;
		if (p.env)
			c["process"]["env"].push_back(std::string("RBLN_VISIBLE_DEVICES=") + p.env);
		if (p.privileged)
			make_privileged(c);
		Outcome r = run(c);
		ASSERT_EQ(r.exit, 0) << r.out;
		std::string out = squeeze(r.out);
		EXPECT_NE(out.find(std::string("inside=") + p.inside + "\n"), std::string::npos) << r.out;
		EXPECT_NE(out.find("g=0\n"), std::string::npos) << r.out;
		EXPECT_NE(out.find("Logical Device | Physical NPU IDs | Status\n"), std::string::npos) << r.out;
		for (const auto &row : p.plan)
			EXPECT_NE(out.find(row + "\n"), std::string::npos) << row << "\n" << r.out;
		EXPECT_EQ(out.find("Unused"), std::string::npos) << r.out;
		EXPECT_EQ(out.find("warning: no logical"), std::string::npos) << r.out;
		EXPECT_EQ(out.find("error"), std::string::npos) << r.out;
	}
	fs::remove("/var/run/cdi/rbln.yaml");
}

} // namespace
