// rbln-smi against the real module: the tables (golden), JSON (typed,
// schema_version), CSV, exit codes, --reclaim and events.
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>
#include <tuple>
#include <utility>

#include <sys/ioctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "rbln/devmgr.hpp"
#include "rbln_drm.h"
#include "rbln_test_util.h"

using namespace rbln::test;

namespace {

using SmiResult = CommandResult;

std::string smi_binary()
{
	const char *bin = std::getenv("RBLN_SMI");
	EXPECT_NE(bin, nullptr) << "RBLN_SMI is set by tests/vm/suite.sh";
	return bin ? bin : "rbln-smi";
}

// rbln-smi ARGS, stdout and stderr together.
SmiResult smi(const std::string &args)
{
	return run_shell(smi_binary() + " " + args + " 2>&1");
}

} // namespace

TEST(Smi, DefaultViewGolden)
{
	SmiResult r = smi("");
	EXPECT_EQ(r.exit, 0);
	EXPECT_EQ(r.out,
		  "+----------------------------------------------------------------------------+\n"
		  "| Device Information                                          KMD ver: 0.1.0 |\n"
		  "+----------------------------------------------------------------------------+\n"
		  "| NPU Name      Device PCI BUS ID   Temp  Power Perf Memory(used/total) Util |\n"
		  "+----------------------------------------------------------------------------+\n"
		  "|   0 RBLN-CA12 rbln0  0000:00:20.0  32C  18.0W  P14         0 / 64 MiB   0% |\n"
		  "|   1 RBLN-CR03 rbln1  0000:01:20.0  32C  60.0W  P14         0 / 64 MiB   0% |\n"
		  "+----------------------------------------------------------------------------+\n"
		  "| Context Information                                                        |\n"
		  "+----------------------------------------------------------------------------+\n"
		  "| NPU Process             PID  Client             Memory State               |\n"
		  "+----------------------------------------------------------------------------+\n"
		  "| No running processes found                                                 |\n"
		  "+----------------------------------------------------------------------------+\n");
	for (size_t pos = 0, nl; (nl = r.out.find('\n', pos)) != std::string::npos; pos = nl + 1)
		EXPECT_LE(nl - pos, 80u) << "fits an 80-column terminal";
}

TEST(Smi, FullReportShowsChiplets)
{
	SmiResult r = smi("-q -i 0000:01:20.0");
	EXPECT_EQ(r.exit, 0);
	EXPECT_NE(r.out.find("|     chiplet 0          0 / 16 MiB  NDMA TDMA DHDMA EHDMA"), std::string::npos) << r.out;
	EXPECT_NE(r.out.find("|       busy  NDMA "), std::string::npos) << r.out;
	EXPECT_NE(r.out.find("|     chiplet 3          0 / 16 MiB  NDMA TDMA DHDMA  "), std::string::npos) << r.out;
	EXPECT_EQ(r.out.find("RBLN-CA12"), std::string::npos) << "-i picked NPU 1 only";
}

TEST(Smi, ContextsShowHoldersAndStaleClients)
{
	Fd fd = open_node(sim_device(1)->node);
	uint32_t h;
	ASSERT_EQ(bo_create(fd.get(), 3 << 20, DRM_RBLN_BO_EAGER, 1, &h), 0);
	drm_rbln_acquire a{};
	ASSERT_EQ(ioctl(fd.get(), DRM_IOCTL_RBLN_ACQUIRE, &a), 0);
	pid_t keeper = make_stale_client(0, 2 << 20);
	ASSERT_GT(keeper, 0);

	SmiResult r = smi("");
	EXPECT_EQ(r.exit, 0);
	EXPECT_NE(r.out.find("|   1 rbln_integratio " + std::string(7 - std::to_string(getpid()).size(), ' ') +
			     std::to_string(getpid())), std::string::npos) << r.out;
	EXPECT_NE(r.out.find("3 / 64 MiB acquired"), std::string::npos) << r.out;
	EXPECT_NE(r.out.find("2 / 64 MiB STALE"), std::string::npos) << r.out;
	EXPECT_NE(r.out.find("|   1 RBLN-CR03 rbln1  0000:01:20.0  32C  60.0W  P14         3 / 64 MiB"),
		  std::string::npos) << r.out;

	// --reclaim frees the stale one and only that.
	r = smi("--reclaim");
	EXPECT_EQ(r.exit, 0);
	EXPECT_NE(r.out.find("NPU 0: reclaimed client "), std::string::npos) << r.out;
	EXPECT_NE(r.out.find("(rbln_integratio): 2 MiB freed"), std::string::npos) << r.out;
	r = smi("--reclaim");
	EXPECT_EQ(r.out, "no stale clients on NPU 0, 1\n");
	kill(keeper, SIGKILL);
}

TEST(Smi, JsonIsTypedAndVersioned)
{
	SmiResult r = smi("-j");
	ASSERT_EQ(r.exit, 0);
	auto j = nlohmann::json::parse(r.out);
	EXPECT_EQ(j["schema_version"], 1);
	EXPECT_TRUE(j["driver_version"].is_string());
	ASSERT_EQ(j["devices"].size(), 2u);
	const auto &rebel = j["devices"][1];
	EXPECT_TRUE(rebel["npu"].is_number_integer());
	EXPECT_EQ(rebel["npu"], 1);
	EXPECT_EQ(rebel["name"], "RBLN-CR03");
	EXPECT_TRUE(rebel["memory"]["total"].is_number_integer());
	EXPECT_EQ(rebel["memory"]["total"], 64ull << 20);
	EXPECT_EQ(rebel["pci"]["bus_id"], "0000:01:20.0");
	EXPECT_TRUE(rebel["temperature_c"].is_number_integer());
	ASSERT_EQ(rebel["chiplets"].size(), 4u);
	EXPECT_EQ(rebel["chiplets"][0]["engines"].back(), "external_hdma");
	EXPECT_EQ(rebel["chiplets"][1]["engines"].size(), 3u);
	EXPECT_EQ(rebel["chiplets"][1]["engine_busy_ns"].size(), 3u) << "one figure per present engine";
	EXPECT_TRUE(rebel["chiplets"][0]["engine_busy_ns"]["external_hdma"].is_number_unsigned());
	EXPECT_TRUE(j["contexts"].is_array());
}

TEST(Smi, CsvQueryAndExitCodes)
{
	SmiResult r = smi("--query npu,name,memory.total,pstate --format csv");
	EXPECT_EQ(r.exit, 0);
	EXPECT_EQ(r.out, "npu, name, memory.total [B], pstate\n"
			 "0, RBLN-CA12, 67108864 B, P14\n"
			 "1, RBLN-CR03, 67108864 B, P14\n");
	r = smi("--query npu,memory.total --format csv,noheader,nounits");
	EXPECT_EQ(r.exit, 0);
	EXPECT_EQ(r.out, "0, 67108864\n1, 67108864\n");
	EXPECT_EQ(smi("--query uuid --format csv,noheader -i 0").out,
		  read_file(sim_device(0)->sysfs + "/uuid").value_or("?") + "\n");
	EXPECT_EQ(smi("-i 9").exit, 5) << "NPU not found";
	EXPECT_EQ(smi("--frobnicate").exit, 2) << "bad argument";
	EXPECT_EQ(smi("--help").exit, 0);
}

TEST(Smi, GroupsFollowTheEnvironment)
{
	setenv("RBLN_NPUS_PER_DEVICE", "2", 1);
	SmiResult r = smi("-g");
	unsetenv("RBLN_NPUS_PER_DEVICE");
	EXPECT_EQ(r.out, "Logical Device | Physical NPU IDs | Status\n"
			 "0              | 0, 1             | Active (Aggregated)\n"
			 "(Physical NPU IDs are host ids, N of /dev/rblnN, which a container keeps; "
			 "RBLN_DEVICE_MAP counts the visible NPUs from 0 in RBLN_VISIBLE_DEVICES order)\n");
	EXPECT_EQ(r.exit, 0);

	// A bad configuration: the error, and a status a script can check.
	setenv("RBLN_NPUS_PER_DEVICE", "3", 1);
	r = smi("-g");
	unsetenv("RBLN_NPUS_PER_DEVICE");
	EXPECT_EQ(r.exit, 2) << r.out;
	EXPECT_NE(r.out.find("rbln-smi: RBLN_NPUS_PER_DEVICE='3': must be one of 1, 2, 4, 8, 16 or 32"),
		  std::string::npos) << r.out;
	setenv("RBLN_VISIBLE_DEVICES", "all", 1);
	r = smi("-g");
	unsetenv("RBLN_VISIBLE_DEVICES");
	EXPECT_EQ(r.exit, 0) << r.out;
	EXPECT_NE(r.out.find("1              | 1                | Active\n"), std::string::npos) << r.out;
}

TEST(Smi, EventsStreamUntilCount)
{
	std::string err = "/tmp/rbln-smi-events.err";
	std::string cmd = smi_binary() + " events --json --count 2 --timeout 60 2>" + err;
	FILE *p = popen(cmd.c_str(), "r");
	for (int i = 0; i < 200 && read_file(err).value_or("").empty(); i++)
		usleep(50000);	// until it says it is listening
	ASSERT_EQ(sim_new_device("15 atom 16"), 0);
	ASSERT_EQ(sim_del_device(15), 0);
	std::string out = read_all(p);
	EXPECT_EQ(pclose(p), 0);
	EXPECT_EQ(out, "{\"event\":\"device_added\",\"npu\":15,\"schema_version\":1}\n"
		       "{\"event\":\"device_removed\",\"npu\":15,\"schema_version\":1}\n");
	// Each line is a document of the events schema.
	const std::string top = std::getenv("RBLN_TOP");
	std::ofstream("/tmp/smi-event.json") << out.substr(0, out.find('\n'));
	EXPECT_EQ(std::system((top + "/tests/vm/validate-json.py " + top +
			       "/docs/rbln-smi-events.schema.json /tmp/smi-event.json").c_str()), 0);
}

// Every --json a tool prints carries schema_version and validates against its
// schema in docs/; each schema has teeth (a wrong version or type fails).
TEST(Smi, EveryJsonOutputHasAVersionAndASchema)
{
	const std::string top = std::getenv("RBLN_TOP");
	const std::string ctk = (std::filesystem::path(smi_binary()).parent_path().parent_path() /
				 "rbln-ctk/rbln-ctk").string();
	struct Case {
		std::string command, schema;
		const char *bad_key;	// a member whose wrong type the schema must refuse
	};
	const Case cases[] = {
		{smi_binary() + " --query npu,name,memory.used -j", "rbln-smi-query", "fields"},
		{smi_binary() + " selftest -i 0 --json", "rbln-smi-selftest", "results"},
		{smi_binary() + " triage 'RBLN ABI mismatch: x' --json", "rbln-smi-triage", "matched"},
		{smi_binary() + " diagnose --json", "rbln-smi-diagnose", "device_nodes"},
		{ctk + " info --json", "rbln-ctk-info", "npus"},
	};
	for (const auto &c : cases) {
		SmiResult r = run_shell(c.command + " 2>/dev/null");
		ASSERT_EQ(r.exit, 0) << c.command << "\n" << r.out;
		auto doc = nlohmann::json::parse(r.out);
		EXPECT_EQ(doc["schema_version"], 1) << c.command;
		const std::string validate = top + "/tests/vm/validate-json.py " + top + "/docs/" +
					     c.schema + ".schema.json ";
		std::ofstream("/tmp/out.json") << r.out;
		EXPECT_EQ(std::system((validate + "/tmp/out.json").c_str()), 0) << c.command << "\n" << r.out;
		for (auto change : {std::pair<const char *, nlohmann::json>{"schema_version", 2},
				    {c.bad_key, "text"}}) {
			auto bad = doc;
			bad[change.first] = change.second;
			std::ofstream("/tmp/out-bad.json") << bad.dump();
			EXPECT_NE(std::system((validate + "/tmp/out-bad.json >/dev/null").c_str()), 0)
				<< c.schema << " takes " << change.first << " = " << change.second.dump();
		}
	}
	// The query keeps each figure's type: NPU as a number, the name as a string.
	auto q = nlohmann::json::parse(smi("--query npu,name -j").out);
	ASSERT_EQ(q["devices"].size(), 2u);
	EXPECT_EQ(q["fields"], nlohmann::json({"npu", "name"}));
	EXPECT_TRUE(q["devices"][1]["npu"].is_number_integer());
	EXPECT_TRUE(q["devices"][1]["name"].is_string());
}

TEST(Smi, DiagnoseReportsTheRealSetup)
{
	const std::string bin = smi_binary();
	const std::string libdir = bin.substr(0, bin.rfind("/tools/")) + "/libdevmgr";
	SmiResult run = run_shell("LD_LIBRARY_PATH=" + libdir + " RBLN_VISIBLE_DEVICES=1 " + bin +
				  " diagnose --json 2>&1");
	ASSERT_EQ(run.exit, 0) << run.out;
	auto r = nlohmann::json::parse(run.out);

	EXPECT_EQ(r["module"]["loaded"], true);
	EXPECT_EQ(r["module"]["version"], read_file("/sys/module/rbln/version").value_or("?"));
	EXPECT_EQ(r["module"]["parameters"]["sim_devices"], "atom,rebel100");
	ASSERT_EQ(r["device_nodes"].size(), 2u);
	for (const auto &node : r["device_nodes"]) {
		EXPECT_EQ(node["present"], true);
		EXPECT_EQ(node["mode"], "0660");
		EXPECT_EQ(node["group"], "rbln");
		EXPECT_EQ(node["can_open"], true) << "root";
		EXPECT_TRUE(node["rbln_link"].is_string());
	}
	EXPECT_EQ(r["udev"]["rules"], "/etc/udev/rules.d/70-rbln.rules");
	EXPECT_EQ(r["abi"]["verdict"], "ok");
	EXPECT_EQ(r["abi"]["driver_version"], r["abi"]["built_against"]);
	EXPECT_EQ(r["environment"]["RBLN_VISIBLE_DEVICES"], "1");
	EXPECT_NE(r["grouping"]["plan"].get<std::string>().find("0              | 1 "), std::string::npos);
	EXPECT_EQ(r["library"]["loads"], libdir + "/librbln_devmgr.so.0");
	ASSERT_FALSE(r["library"]["candidates"].empty());
	EXPECT_EQ(r["library"]["candidates"][0]["path"], libdir + "/librbln_devmgr.so.0");
	EXPECT_EQ(r["library"]["candidates"][0]["loadable"], true);
	EXPECT_TRUE(r["processes"].is_array()) << "root can read them";
	// The VM boots only kernels of the tested series, and the sanitizer
	// kernel, which is no Debian kernel and is reported as none of them.
	const std::string kernel = r["host"]["kernel"];
	if (kernel.ends_with("-rbln-debug"))
		EXPECT_TRUE(r["host"]["tested_kernels"]["this_kernel"].is_null()) << kernel;
	else
		EXPECT_TRUE(r["host"]["tested_kernels"]["this_kernel"].is_string()) << kernel;
}

TEST(Smi, SelftestPassesAndReportsFailures)
{
	SmiResult r = smi("selftest");
	EXPECT_EQ(r.exit, 0) << r.out;
	EXPECT_NE(r.out.find("NPU 0 RBLN-CA12: PASS (1 chiplet(s), 1 MiB round trip intact"), std::string::npos) << r.out;
	EXPECT_NE(r.out.find("NPU 1 RBLN-CR03: PASS (4 chiplet(s), 1 MiB round trip intact"), std::string::npos) << r.out;

	ASSERT_EQ(write_file("/sys/kernel/debug/rbln/rbln1/fail_next_jobs", "1"), 0);
	r = smi("selftest -i 1");
	EXPECT_EQ(r.exit, 1);
	EXPECT_NE(r.out.find("NPU 1 RBLN-CR03: FAIL (rbln:1: job "), std::string::npos) << r.out;
	EXPECT_NE(r.out.find("the job failed on the device"), std::string::npos) << r.out;
}

TEST(Smi, ResetRefusesWhileInUseAndForceRevokes)
{
	ASSERT_EQ(write_file("/sys/kernel/debug/rbln/rbln1/memory_error", "2"), 0);
	EXPECT_EQ(read_file(sim_device(1)->sysfs + "/status"), "FAULT");
	SmiResult r = smi("reset -i 1");
	EXPECT_EQ(r.exit, 0) << r.out;
	EXPECT_EQ(r.out, "NPU 1: reset\n");
	EXPECT_EQ(read_file(sim_device(1)->sysfs + "/status"), "READY");

	Fd holder = open_node(sim_device(1)->node);
	r = smi("reset -i 1");
	EXPECT_EQ(r.exit, 6) << "in use";
	EXPECT_NE(r.out.find("rbln:1: in use by PID " + std::to_string(getpid()) + " (rbln_integratio)"),
		  std::string::npos) << r.out;
	r = smi("reset -i 1 --force");
	EXPECT_EQ(r.exit, 0);
	EXPECT_EQ(r.out, "NPU 1: reset (1 open file(s) revoked)\n");
	uint64_t v;
	EXPECT_EQ(get_param(holder.get(), DRM_RBLN_PARAM_UAPI_VERSION, &v), ENODEV);
	EXPECT_EQ(smi("reset").exit, 2);
}

// A lost chiplet and a memory error as rbln-smi -j shows them: the
// chiplet's status, the device's FAULT, and the counters, which a reset keeps.
TEST(Smi, JsonShowsLostChipletsAndCounters)
{
	auto counters = [](const nlohmann::json &d) {
		return std::tuple{d["counters"]["faults"].get<uint64_t>(), d["counters"]["memory_errors"].get<uint64_t>(),
				  d["counters"]["engine_resets"].get<uint64_t>()};
	};
	SmiResult r = smi("-j -i 1");
	ASSERT_EQ(r.exit, 0) << r.out;
	auto before = nlohmann::json::parse(r.out)["devices"][0];
	ASSERT_TRUE(before.contains("counters")) << r.out;
	const auto [faults, memory_errors, resets] = counters(before);
	EXPECT_EQ(before["chiplets"][2]["status"], "ok");

	ASSERT_EQ(write_file("/sys/kernel/debug/rbln/rbln1/chiplet_down", "2 1"), 0);
	ASSERT_EQ(write_file("/sys/kernel/debug/rbln/rbln1/memory_error", "1"), 0);
	r = smi("-j -i 1");
	ASSERT_EQ(r.exit, 0) << r.out;
	auto d = nlohmann::json::parse(r.out)["devices"][0];
	EXPECT_EQ(d["status"], "FAULT");
	EXPECT_EQ(d["chiplets"][2]["status"], "lost");
	EXPECT_EQ(d["chiplets"][1]["status"], "ok");
	EXPECT_EQ(counters(d), std::tuple(faults + 1, memory_errors + 1, resets))
		<< "one FAULT (the memory error found the device faulted already)";

	ASSERT_EQ(smi("reset -i 1").exit, 0);
	r = smi("-j -i 1");
	d = nlohmann::json::parse(r.out)["devices"][0];
	EXPECT_EQ(d["status"], "READY");
	EXPECT_EQ(d["chiplets"][2]["status"], "ok");
	EXPECT_EQ(counters(d), std::tuple(faults + 1, memory_errors + 1, resets)) << "a reset keeps the counters";
}

TEST(Smi, DmonAndTopo)
{
	// Utilisation is measured over windows of >= 1 s of real engine busy time:
	// close the window that saw earlier tests' jobs, so the device reads idle.
	read_file(sim_device(1)->sysfs + "/utilization");
	usleep(1'100'000);
	SmiResult r = smi("dmon --count 2 -d 0.1 -i 1");
	EXPECT_EQ(r.exit, 0);
	EXPECT_EQ(r.out, "# npu  temp  power pstate  util  mem_used mem_total status\n"
			 "# idx     C      W           %       MiB       MiB\n"
			 "    1    32   60.0    P14     0         0        64 READY\n"
			 "    1    32   60.0    P14     0         0        64 READY\n");
}

// The links come from the driver (chipletN/links), not from chiplet_count:
// the simulated Rebel100 is a 2x2 grid, so an all-to-all drawing is wrong at
// C0-C3 and C1-C2.
TEST(Smi, TopoShowsTheLinksTheDriverPublishes)
{
	const std::string sysfs = sim_device(1)->sysfs;
	EXPECT_EQ(read_file(sysfs + "/chiplet0/links"), "1:d2d 2:d2d");
	EXPECT_EQ(read_file(sysfs + "/chiplet1/links"), "0:d2d 3:d2d");
	EXPECT_EQ(read_file(sysfs + "/chiplet2/links"), "0:d2d 3:d2d");
	EXPECT_EQ(read_file(sysfs + "/chiplet3/links"), "1:d2d 2:d2d");
	EXPECT_EQ(read_file(sim_device(0)->sysfs + "/chiplet0/links"), "") << "one die, no links";

	SmiResult r = smi("topo -i 1");
	EXPECT_EQ(r.exit, 0);
	EXPECT_EQ(r.out.substr(0, r.out.find("\n\n")),
		  "NPU 1 RBLN-CR03 (0000:01:20.0, NUMA node 0)\n"
		  "            C0     C1     C2     C3    Host\n"
		  "  C0         X    D2D    D2D      -   EHDMA\n"
		  "  C1       D2D      X      -    D2D  via C0\n"
		  "  C2       D2D      -      X    D2D  via C0\n"
		  "  C3         -    D2D    D2D      X  via C0");

	r = smi("topo -j -i 0,1");
	ASSERT_EQ(r.exit, 0) << r.out;
	const std::string top = std::getenv("RBLN_TOP");
	std::ofstream("/tmp/topo.json") << r.out;
	EXPECT_EQ(std::system((top + "/tests/vm/validate-json.py " + top + "/docs/rbln-smi-topo.schema.json "
			       "/tmp/topo.json").c_str()), 0) << r.out;
	auto doc = nlohmann::json::parse(r.out);
	ASSERT_EQ(doc["npus"].size(), 2u);
	EXPECT_EQ(doc["npus"][0]["chiplets"][0]["links"], nlohmann::json::array()) << "ATOM: none";
	auto c3 = doc["npus"][1]["chiplets"][3];
	EXPECT_EQ(c3["links"], nlohmann::json::parse(R"([{"peer":1,"kind":"d2d"},{"peer":2,"kind":"d2d"}])"));
	EXPECT_FALSE(c3["host_link"]);
	EXPECT_TRUE(doc["npus"][1]["chiplets"][0]["host_link"]);
}

// Simulated NPUs hang off the rbln_sim bus, not PCI: the matrix says so
// instead of inventing a PCI relation.
TEST(Smi, TopoMatrixSaysSimulatedNpusAreNotOnPci)
{
	SmiResult r = smi("topo -m -i 0,1");	// the simulated NPUs (a PCI VM has more)
	ASSERT_EQ(r.exit, 0) << r.out;
	EXPECT_EQ(r.out.substr(0, r.out.find("\n\n")),
		  "         NPU0   NPU1  NUMA Affinity  PCI Bus Id\n"
		  "NPU0        X    SIM  0              (not on PCI)\n"
		  "NPU1      SIM      X  0              (not on PCI)");
	EXPECT_NE(r.out.find("  SIM  = Not on PCI"), std::string::npos) << r.out;
	EXPECT_NE(r.out.find("  PIX  = Connection traversing at most a single PCIe bridge"), std::string::npos);

	r = smi("topo -m -j -i 0,1");
	ASSERT_EQ(r.exit, 0) << r.out;
	const std::string top = std::getenv("RBLN_TOP");
	std::ofstream("/tmp/topo-m.json") << r.out;
	EXPECT_EQ(std::system((top + "/tests/vm/validate-json.py " + top + "/docs/rbln-smi-topo.schema.json "
			       "/tmp/topo-m.json").c_str()), 0) << r.out;
	auto doc = nlohmann::json::parse(r.out);
	EXPECT_EQ(doc["view"], "matrix");
	EXPECT_TRUE(doc["npus"][1]["pci"].is_null());
	EXPECT_EQ(doc["npus"][0]["relations"][1]["relation"], "SIM");
	EXPECT_EQ(doc["npus"][1]["relations"][1]["relation"], "X");
}

TEST(Smi, JsonValidatesAgainstThePublishedSchema)
{
	const std::string top = std::getenv("RBLN_TOP");
	const std::string schema = top + "/docs/rbln-smi.schema.json";
	const std::string validate = top + "/tests/vm/validate-json.py " + schema + " ";
	Fd fd = open_node(sim_device(1)->node);	// a context to list
	uint32_t h;
	ASSERT_EQ(bo_create(fd.get(), 1 << 20, 0, 0, &h), 0);

	SmiResult r = smi("-j");
	ASSERT_EQ(r.exit, 0);
	std::ofstream("/tmp/smi.json") << r.out;
	EXPECT_EQ(std::system((validate + "/tmp/smi.json").c_str()), 0) << r.out;
	auto doc = nlohmann::json::parse(r.out);
	ASSERT_FALSE(doc["contexts"].empty());

	// The schema has teeth: the change that once broke monitors (npu as a string) fails.
	doc["devices"][0]["npu"] = "0";
	std::ofstream("/tmp/smi-bad.json") << doc.dump();
	EXPECT_NE(std::system((validate + "/tmp/smi-bad.json > /tmp/smi-bad.txt").c_str()), 0);
	EXPECT_NE(read_file("/tmp/smi-bad.txt").value_or("").find("devices/0/npu: '0' is not of type 'integer'"),
		  std::string::npos) << read_file("/tmp/smi-bad.txt").value_or("");
}

// Scripts written for the vendor's rbln-smi -j keep working with
// --json-format vendor: its keys, its types (memory as decimal strings).
TEST(Smi, VendorJsonMatchesTheVendorSchema)
{
	const std::string top = std::getenv("RBLN_TOP");
	const std::string validate = top + "/tests/vm/validate-json.py " + top +
				     "/docs/rbln-smi-vendor.schema.json ";
	Fd fd = open_node(sim_device(1)->node);	// a context to list
	uint32_t h;
	ASSERT_EQ(bo_create(fd.get(), 1 << 20, 0, 0, &h), 0);

	SmiResult r = smi("-j --json-format vendor");
	ASSERT_EQ(r.exit, 0) << r.out;
	std::ofstream("/tmp/smi-vendor.json") << r.out;
	EXPECT_EQ(std::system((validate + "/tmp/smi-vendor.json").c_str()), 0) << r.out;
	auto doc = nlohmann::json::parse(r.out);
	EXPECT_EQ(doc["KMD_version"], "0.1.0");
	ASSERT_EQ(doc["devices"].size(), 2u);
	EXPECT_EQ(doc["devices"][1]["npu"], 1);
	EXPECT_EQ(doc["devices"][1]["memory"]["total"], std::to_string(64 << 20));
	EXPECT_EQ(doc["devices"][1]["memory"]["used"], std::to_string(1 << 20));
	ASSERT_FALSE(doc["contexts"].empty());
	EXPECT_EQ(doc["contexts"][0]["cmd"], "rbln_integratio");

	// The schema has teeth: memory as a number is not the vendor's type.
	doc["devices"][0]["memory"]["used"] = 0;
	std::ofstream("/tmp/smi-vendor-bad.json") << doc.dump();
	EXPECT_NE(std::system((validate + "/tmp/smi-vendor-bad.json > /dev/null 2>&1").c_str()), 0);
}

TEST(Smi, LoopRepeatsUntilInterrupted)
{
	auto [status, out] = run_shell("timeout --preserve-status -s INT 2.5 " + smi_binary() +
				       " -l 0.5 --query npu --format csv,noheader");
	EXPECT_EQ(status, 0) << "Ctrl-C ends the loop cleanly";
	size_t rounds = 0;
	for (size_t pos = 0; (pos = out.find("0\n1\n", pos)) != std::string::npos; pos += 4)
		rounds++;
	EXPECT_GE(rounds, 3u) << out;
}

TEST(Smi, AUserOutsideGroupRblnSeesDevicesAndGetsPermissionErrors)
{
	const std::string as_nobody = "setpriv --reuid=65534 --regid=65534 --clear-groups ";
	auto run = [&](const std::string &args) {
		return run_shell(as_nobody + smi_binary() + " " + args + " 2>&1");
	};
	SmiResult r = run("");
	EXPECT_EQ(r.exit, 0) << r.out;
	EXPECT_NE(r.out.find("|   1 RBLN-CR03 rbln1  0000:01:20.0"), std::string::npos) << "devices from sysfs";
	EXPECT_NE(r.out.find("note: processes of NPU 0 not shown: cannot open"), std::string::npos) << r.out;
	EXPECT_NE(r.out.find("permission denied; device nodes belong to group 'rbln'"), std::string::npos) << r.out;
	EXPECT_EQ(run("--reclaim").exit, 4);
	EXPECT_EQ(run("reset -i 0").exit, 4);
}

// pmon lists this process on the NPU it uses, with the device memory of its
// file and, where the kernel has DRM fdinfo, External HDMA busy while its
// jobs run (and "-" where it has not).
TEST(Smi, PmonShowsAProcessesEnginesAndMemory)
{
	rbln::Device dev = rbln::Device::open(0);
	const bool fdinfo = dev.info().capabilities & DRM_RBLN_CAP_FDINFO;
	rbln::Buffer host = dev.allocate_host(4 << 20);
	rbln::Buffer vram = dev.allocate(4 << 20, rbln::Placement::on_chiplet(0), rbln::AllocMode::eager);
	std::atomic<bool> stop{false};
	std::thread busy([&] {
		while (!stop)
			dev.submit(rbln::Engine::external_hdma, 0, {{host, vram, 0, 0, 4 << 20}}).wait();
	});
	SmiResult r = smi("pmon -i 0 -d 1 --count 3");
	stop = true;
	busy.join();
	ASSERT_EQ(r.exit, 0) << r.out;
	std::vector<std::string> mine;
	std::istringstream lines(r.out);
	for (std::string line; std::getline(lines, line);)
		if (line.find(" " + std::to_string(getpid()) + " ") != std::string::npos)
			mine.push_back(line);
	ASSERT_EQ(mine.size(), 3u) << r.out;
	unsigned npu, pid, mem;
	std::string n, t, d, e;
	std::istringstream last(mine.back());
	ASSERT_TRUE(last >> npu >> pid >> n >> t >> d >> e >> mem) << mine.back();
	EXPECT_EQ(npu, 0u);
	EXPECT_EQ(mem, 4u) << "the eager 4 MiB buffer";
	EXPECT_NE(mine.back().find("rbln_integratio"), std::string::npos) << mine.back();
	if (fdinfo) {
		EXPECT_GT(std::stoul(e), 0u) << "External HDMA ran its jobs: " << mine.back();
		EXPECT_EQ(n, "0") << mine.back();
	} else {
		EXPECT_EQ(e, "-") << "no fdinfo on this kernel: " << mine.back();
	}
}
