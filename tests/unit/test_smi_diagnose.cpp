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

// Every error text of the seeds and shared/reference/rbln-facts.md, the
// vendor's wording and ours, lands in the layer that failed.
TEST(SmiTriage, EveryKnownErrorTextLandsInItsLayer)
{
	const char *const config = "configuration (RBLN_* variables)";
	const char *const registration = "registration (NPU held elsewhere or stale)";
	const std::pair<const char *, const char *> rows[] = {
		// rbln-facts.md: the vendor's configuration errors.
		{"Invalid RBLN_DEVICE_MAP format. Expected '[' at position 3", config},
		{"Physical NPU 5 out of range", config},
		{"Physical NPU 2 is already assigned to another logical device", config},
		{"No logical device (this process has 2 physical NPU(s), need 4)", config},
		// Ours (libdevmgr's grouping).
		{"RBLN_VISIBLE_DEVICES: NPU 7 does not exist on this host (NPUs: 0,1)", config},
		{"RBLN_NPUS_PER_DEVICE='3': must be one of 1, 2, 4, 8, 16 or 32", config},
		// Seed 000 / rbln-facts.md: registration, the vendor's text ...
		{"rbln_register_device_id failed for rbln:0 on physical NPU(s) [0] (rc=-16); the "
		 "device(s) may be in use by another process or hold stale allocations. Free the "
		 "device(s) or adjust RBLN_DEVICES.", registration},
		// ... and ours, which names RBLN_VISIBLE_DEVICES as the way out.
		{"rbln_register_device_id failed for rbln:0 on physical NPU(s) [0,1] (rc=-16); rbln:1: "
		 "NPU 1 is held by PID 4242 (python3), which has exited: the holder is stale. Free the "
		 "device(s) or adjust RBLN_VISIBLE_DEVICES. No NPU stays acquired by this process.",
		 registration},
		// Seed 000: allocation, which also says "stale".
		{"rbln_malloc_lazy failed (rbln:0, 4096 bytes); the device may be out of memory or hold "
		 "stale allocations", "device memory"},
		{"rbln_malloc_eager failed (rbln:0, 4096 bytes); the device may be out of memory or hold "
		 "stale allocations", "device memory"},
		{"RBLN ABI mismatch: librbln.so implements 3 (accepts 2..3); this build needs 4",
		 "ABI (driver vs library versions)"},
		{"ImportError: /usr/lib/python3/torch_rbln/_C.so: undefined symbol: c10::rbln::foo",
		 "ABI / build of the native libraries"},
		// Seed 003's generic table.
		{"OSError: libcudart.so.12: cannot open shared object file: No such file or directory",
		 "dynamic linker (library path)"},
		{"ModuleNotFoundError: No module named 'torch'", "Python environment"},
		{"Segmentation fault (core dumped)", "native code (a crash)"},
		// Ours: driver, nodes, devices.
		{"rbln-smi: cannot open /dev/rbln0: the rbln driver is not loaded (no /sys/module/rbln)",
		 "driver (rbln.ko)"},
		{"no NPU matches '9' (an index, uuid or PCI bus id); this host has: no NPUs", "device nodes"},
		// Seed 003's GPU-only texts are not this stack's: said so, not guessed.
		{"RuntimeError: CUDA error: no kernel image is available for execution on the device",
		 "unclassified"},
		{"torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB", "unclassified"},
	};
	for (const auto &[msg, layer] : rows)
		EXPECT_EQ(triage(msg).layer, layer) << msg;
}

// The order of the table is its precedence: the first matching rule wins.
TEST(SmiTriage, PrecedenceIsTheOrderOfTheTable)
{
	auto rank = [](const std::string &layer) {
		const auto &rules = triage_rules();
		for (size_t i = 0; i < rules.size(); i++)
			if (rules[i].layer == layer)
				return i;
		return rules.size();
	};
	EXPECT_LT(rank("registration (NPU held elsewhere or stale)"),
		  rank("configuration (RBLN_* variables)"));
	EXPECT_LT(rank("device memory"), rank("configuration (RBLN_* variables)"));
	// "stale" alone still means a stale holder, after the allocation rule.
	EXPECT_EQ(triage("the holder is stale").layer, "registration (NPU held elsewhere or stale)");
	EXPECT_EQ(triage("RBLN ABI mismatch ... undefined symbol").layer,
		  "ABI (driver vs library versions)");
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
