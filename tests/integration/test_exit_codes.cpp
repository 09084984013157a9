// The exit codes and statuses when there is no driver and when the driver
// has no NPU: every tool and C call says the same thing (rbln/exit_codes.hpp).
// Unloads and reloads the module: linked last, it runs after the others.
#include <cstdlib>
#include <string>

#include <gtest/gtest.h>

#include "rbln/devmgr.h"
#include "rbln/exit_codes.hpp"
#include "rbln_test_util.h"

using namespace rbln::test;

namespace {

int smi_exit(const std::string &args)
{
	const char *bin = std::getenv("RBLN_SMI");
	EXPECT_NE(bin, nullptr) << "RBLN_SMI is set by tests/vm/suite.sh";
	CommandResult r = run_shell(std::string(bin ? bin : "rbln-smi") + " " + args + " >/dev/null 2>&1");
	return r.exit;
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

constexpr int kNoDriver = int(rbln::ExitCode::no_driver);
constexpr int kNotFound = int(rbln::ExitCode::not_found);

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

	rbln_device *dev = nullptr;
	EXPECT_EQ(rbln_device_open(0, &dev), RBLN_ERR_NOT_FOUND) << rbln_last_error();
	rbln_event_listener *listener = nullptr;
	ASSERT_EQ(rbln_event_listener_open(&listener), RBLN_OK) << rbln_last_error();
	rbln_event_listener_close(listener);
}
