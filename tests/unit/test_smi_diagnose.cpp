// triage's rule table, diagnose --diff, and diagnose where there is no
// driver (this host): every section there, missing items null.
#include <filesystem>

#include <gtest/gtest.h>

#include "diagnose.hpp"
#include "tested_kernels.hpp"
#include "triage.hpp"

using namespace rbln::smi;

TEST(SmiTriage, MessagesMapToTheirLayer)
{
	const std::pair<const char *, const char *> rows[] = {
		{"RBLN ABI mismatch: /dev/rbln0 is driven by rbln.ko 0.1.0 ...", "ABI (driver vs library versions)"},
		{"ImportError: /x/_C.so: undefined symbol: rbln_foo", "ABI / build of the native libraries"},
		{"OSError: librbln_devmgr.so.0: cannot open shared object file: No such file or directory",
		 "dynamic linker (library path)"},
		{"rbln-smi: the rbln driver is not loaded (modprobe rbln; ...)", "driver (rbln.ko)"},
		{"cannot open /dev/rbln0: permission denied; device nodes belong to group 'rbln'",
		 "permissions (device nodes)"},
		{"cannot open /dev/rbln3: no such device node; check ...", "device nodes"},
		{"Invalid RBLN_DEVICE_MAP format. Expected '[' at position 0", "configuration (RBLN_* variables)"},
		{"rbln_malloc_lazy failed (rbln:0, 4096 bytes); the device may be out of memory",
		 "device memory"},
		{"rbln_register_device_id failed for rbln:0 on physical NPU(s) [0] (rc=-16)",
		 "registration (NPU held elsewhere or stale)"},
		{"rbln:1: job 4 on chiplet 0 task_dma failed: the engine hung and was reset",
		 "device (DMA engine)"},
	};
	for (const auto &[msg, layer] : rows) {
		auto v = triage(msg);
		EXPECT_TRUE(v.matched) << msg;
		EXPECT_EQ(v.layer, layer) << msg;
		EXPECT_FALSE(v.check.empty());
	}
	EXPECT_EQ(triage("Segmentation fault (core dumped)").layer, "native code (a crash)");
	EXPECT_EQ(triage("rbln:1: status FAULT after a memory error").layer, "device health");
	auto v = triage("the moon is made of cheese");
	EXPECT_FALSE(v.matched);
	EXPECT_EQ(v.layer, "unclassified");
	EXPECT_NE(v.check.find("rbln-smi diagnose --json"), std::string::npos);
}

TEST(SmiDiagnose, DiffSaysWhatChangedOneLineEach)
{
	auto a = nlohmann::json::parse(R"({"module": {"loaded": true, "version": "0.1.0"},
					   "environment": {"RBLN_VISIBLE_DEVICES": null}, "x": 1})");
	auto b = nlohmann::json::parse(R"({"module": {"loaded": true, "version": "0.2.0"},
					   "environment": {"RBLN_VISIBLE_DEVICES": "0,1"}, "y": 2})");
	EXPECT_EQ(diagnose_diff(a, b), "/environment/RBLN_VISIBLE_DEVICES: null -> \"0,1\"\n"
				       "/module/version: \"0.1.0\" -> \"0.2.0\"\n"
				       "/x: 1 -> (absent)\n"
				       "/y: (absent) -> 2\n");
	EXPECT_EQ(diagnose_diff(a, a), "");
}

TEST(SmiDiagnose, EverySectionIsThereAndMissingIsNull)
{
	auto r = diagnose_report();
	for (const char *k : {"host", "module", "device_nodes", "udev", "library", "abi", "environment",
			      "grouping", "container", "processes"})
		EXPECT_TRUE(r.contains(k)) << k;
	EXPECT_EQ(r["schema_version"], 1);
	EXPECT_TRUE(r["environment"].contains("RBLN_VISIBLE_DEVICES")) << "unset variables are recorded as null";
	EXPECT_TRUE(r["host"]["kernel"].is_string());
	if (!std::filesystem::exists("/sys/module/rbln")) {	// a host without the driver
		EXPECT_EQ(r["module"]["loaded"], false);
		EXPECT_TRUE(r["module"]["version"].is_null());
		EXPECT_TRUE(r["device_nodes"].empty());
		EXPECT_EQ(r["abi"]["verdict"], "unknown: the driver is not loaded");
		EXPECT_TRUE(r["processes"].is_null());
	}
	EXPECT_NE(diagnose_text(r).find("module.loaded: "), std::string::npos);
}

TEST(SmiDiagnose, NamesTheTestedKernelSeriesAndWhichOneRuns)
{
	auto t = tested_kernels("6.12.117+deb12-amd64");
	EXPECT_EQ(t["series"], nlohmann::json::parse(R"(["6.1", "6.12", "7.x"])"));
	EXPECT_EQ(t["this_kernel"], "6.12");
	EXPECT_EQ(tested_kernels("6.1.0-57-amd64")["this_kernel"], "6.1");
	EXPECT_EQ(tested_kernels("7.3.4+deb13-amd64")["this_kernel"], "7.x");
	EXPECT_TRUE(tested_kernels("6.6.0-1-amd64")["this_kernel"].is_null());
	EXPECT_TRUE(tested_kernels("6.12.117+deb12-cloud-amd64")["this_kernel"].is_null());
	EXPECT_EQ(diagnose_report()["host"]["tested_kernels"]["series"], t["series"]);
}
