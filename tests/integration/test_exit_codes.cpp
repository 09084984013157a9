// The exit codes and statuses when there is no driver and when the driver
// has no NPU: every tool and C call says the same thing (rbln/exit_codes.hpp).
// Unloads and reloads the module: linked last, it runs after the others.
#include <cstdlib>
#include <filesystem>
#include <string>

#include <grp.h>
#include <sys/stat.h>

#include <gtest/gtest.h>

#include "rbln/devmgr.h"
#include "rbln/exit_codes.hpp"
#include "rbln_test_util.h"

using namespace rbln::test;

namespace {

std::string smi_binary()
{
	const char *bin = std::getenv("RBLN_SMI");
	EXPECT_NE(bin, nullptr) << "RBLN_SMI is set by tests/vm/suite.sh";
	return bin ? bin : "rbln-smi";
}

// rbln-ctk of the same build: tools/rbln-ctk/ next to tools/rbln-smi/.
std::string ctk_binary()
{
	return (std::filesystem::path(smi_binary()).parent_path().parent_path() / "rbln-ctk/rbln-ctk").string();
}

int smi_exit(const std::string &args)
{
	return run_shell(smi_binary() + " " + args + " >/dev/null 2>&1").exit;
}

int ctk_exit(const std::string &args)
{
	return run_shell(ctk_binary() + " " + args + " >/dev/null 2>&1").exit;
}

// Reloads the module with @params for the test, and as the suite had it after.
class ModuleState : public ::testing::Test {
protected:
	void TearDown() override
	{
		if (module_loaded()) {
			ASSERT_EQ(unload_module_once_unused(), 0);
		}
		ASSERT_EQ(load_module(), 0);
	}
	void reload(const char *params)
	{
		ASSERT_EQ(unload_module_once_unused(), 0);
		if (!params)
			return;
		std::string saved = std::getenv("RBLN_KO_PARAMS") ? std::getenv("RBLN_KO_PARAMS") : "";
		setenv("RBLN_KO_PARAMS", params, 1);
		int err = load_module();
		setenv("RBLN_KO_PARAMS", saved.c_str(), 1);
		ASSERT_EQ(err, 0);
	}
};

constexpr int kError = int(rbln::ExitCode::error);
constexpr int kNoDriver = int(rbln::ExitCode::no_driver);
constexpr int kPermission = int(rbln::ExitCode::permission);
constexpr int kNotFound = int(rbln::ExitCode::not_found);
constexpr int kInUse = int(rbln::ExitCode::in_use);

} // namespace

TEST_F(ModuleState, WithoutTheDriverEveryoneSaysNoDriver)
{
	reload(nullptr);
	ASSERT_FALSE(module_loaded());

	EXPECT_EQ(smi_exit(""), kNoDriver);
	EXPECT_EQ(smi_exit("-j"), kNoDriver);
	EXPECT_EQ(smi_exit("-i 0"), kNoDriver);
	EXPECT_EQ(smi_exit("selftest"), kNoDriver);
	EXPECT_EQ(smi_exit("selftest -i 0"), kNoDriver);
	EXPECT_EQ(smi_exit("events --timeout 1"), kNoDriver);
	EXPECT_EQ(ctk_exit("cdi generate --dry-run"), kNoDriver);
	EXPECT_EQ(ctk_exit("info"), 0) << "info reports a missing driver, it does not fail on it";

	rbln_device *dev = nullptr;
	EXPECT_EQ(rbln_device_open(0, &dev), RBLN_ERR_DRIVER_NOT_LOADED);
	EXPECT_NE(std::string(rbln_last_error()).find("not loaded"), std::string::npos)
		<< rbln_last_error();
	rbln_event_listener *listener = nullptr;
	EXPECT_EQ(rbln_event_listener_open(&listener), RBLN_ERR_DRIVER_NOT_LOADED) << rbln_last_error();
}

TEST_F(ModuleState, TheDriverWithoutNpusSaysNotFound)
{
	reload("");
	ASSERT_TRUE(module_loaded());

	EXPECT_EQ(smi_exit(""), kNotFound);
	EXPECT_EQ(smi_exit("-j"), kNotFound);
	EXPECT_EQ(smi_exit("-i 0"), kNotFound);
	EXPECT_EQ(smi_exit("selftest"), kNotFound);
	EXPECT_EQ(smi_exit("selftest -i 0"), kNotFound);
	EXPECT_EQ(ctk_exit("cdi generate --dry-run"), kNotFound) << "no NPU is 5, not 3 (no driver)";

	rbln_device *dev = nullptr;
	EXPECT_EQ(rbln_device_open(0, &dev), RBLN_ERR_NO_DEVICE) << rbln_last_error();
	rbln_event_listener *listener = nullptr;
	ASSERT_EQ(rbln_event_listener_open(&listener), RBLN_OK) << rbln_last_error();
	rbln_event_listener_close(listener);
}

// An NPU another process holds is 6 for every command that needs it.
TEST(ExitCodes, AHeldNpuIsInUse)
{
	rbln_device *dev = nullptr;
	ASSERT_EQ(rbln_device_open(0, &dev), RBLN_OK) << rbln_last_error();
	ASSERT_EQ(rbln_device_acquire(dev), RBLN_OK) << rbln_last_error();
	CommandResult r = run_shell(smi_binary() + " selftest -i 0,1 2>&1");
	EXPECT_EQ(r.exit, kInUse) << r.out;
	EXPECT_NE(r.out.find("NPU 0 RBLN-CA12: FAIL"), std::string::npos) << r.out;
	EXPECT_NE(r.out.find("NPU 1 RBLN-CR03: PASS"), std::string::npos) << "tested on past it: " << r.out;
	EXPECT_EQ(smi_exit("reset -i 0"), kInUse);
	rbln_device_close(dev);
	EXPECT_EQ(smi_exit("selftest -i 0"), 0);
}

// --reclaim tries every NPU: one it cannot open is reported (exit 4 at the
// end), the others are still checked.
TEST(ExitCodes, ReclaimGoesOnPastAnNpuItCannotOpen)
{
	auto npu0 = sim_device(0);
	ASSERT_TRUE(npu0);
	struct stat st{};
	ASSERT_EQ(::stat(npu0->node.c_str(), &st), 0);
	ASSERT_EQ(::chmod(npu0->node.c_str(), 0600), 0);	// root's only; NPU 1 stays group rbln's
	const group *rbln = ::getgrnam("rbln");
	ASSERT_NE(rbln, nullptr);
	CommandResult r = run_shell("setpriv --reuid=65534 --regid=" + std::to_string(rbln->gr_gid) +
				    " --clear-groups " + smi_binary() + " --reclaim 2>&1");
	::chmod(npu0->node.c_str(), st.st_mode & 07777);
	EXPECT_EQ(r.exit, kPermission) << r.out;
	EXPECT_NE(r.out.find("cannot open " + npu0->node + ": permission denied"), std::string::npos) << r.out;
	EXPECT_NE(r.out.find("no stale clients on NPU 1\n"), std::string::npos) << r.out;
}

// rbln-ctk: a file it may not write is 4 (a typed error, not a guess from errno).
TEST(ExitCodes, CtkPermission)
{
	CommandResult r = run_shell("setpriv --reuid=65534 --regid=65534 --clear-groups " + ctk_binary() +
				    " cdi generate --no-inject --output /root/rbln-exit-test.yaml 2>&1");
	EXPECT_EQ(r.exit, kPermission) << r.out;
	EXPECT_NE(r.out.find("cannot write /root/rbln-exit-test.yaml: Permission denied"), std::string::npos)
		<< r.out;
	r = run_shell(ctk_binary() + " cdi validate /nonexistent.yaml 2>&1");
	EXPECT_EQ(r.exit, kError) << r.out;
}
