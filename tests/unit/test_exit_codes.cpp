// The one table from libdevmgr statuses to tool exit codes, the new statuses
// and rbln_library_version().
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <set>
#include <string>
#include <system_error>

#include <sys/wait.h>

#include <gtest/gtest.h>

#include "rbln/exit_codes.hpp"

using rbln::Errc;
using rbln::ExitCode;

TEST(ExitCodes, EveryStatusHasItsCode)
{
	const std::pair<Errc, ExitCode> expected[] = {
		{Errc::ok, ExitCode::ok},
		{Errc::invalid_argument, ExitCode::bad_argument},
		{Errc::not_found, ExitCode::not_found},
		{Errc::no_device, ExitCode::not_found},
		{Errc::permission, ExitCode::permission},
		{Errc::device_memory, ExitCode::error},
		{Errc::host_memory, ExitCode::error},
		{Errc::busy, ExitCode::in_use},
		{Errc::timeout, ExitCode::error},
		{Errc::engine_hung, ExitCode::error},
		{Errc::job_failed, ExitCode::error},
		{Errc::canceled, ExitCode::error},
		{Errc::system, ExitCode::error},
		{Errc::abi_mismatch, ExitCode::not_supported},
		{Errc::driver_not_loaded, ExitCode::no_driver},
		{Errc::not_supported, ExitCode::not_supported},
	};
	for (auto [errc, code] : expected)
		EXPECT_EQ(rbln::exit_code(errc), code) << rbln_status_string(rbln_status(errc));
}

// By the failure's type, never by errno: a std::runtime_error caught while
// errno happens to say EACCES is an error, not a permission problem.
TEST(ExitCodes, FailuresByTheirType)
{
	EXPECT_EQ(rbln::exit_code(rbln::Error(Errc::busy, EBUSY, "held")), ExitCode::in_use);
	EXPECT_EQ(rbln::exit_code(rbln::Error(Errc::driver_not_loaded, ENODEV, "x")), ExitCode::no_driver);
	EXPECT_EQ(rbln::exit_code(std::system_error(EACCES, std::generic_category(), "cannot write")),
		  ExitCode::permission);
	EXPECT_EQ(rbln::exit_code(std::system_error(EPERM, std::system_category(), "cannot write")),
		  ExitCode::permission);
	EXPECT_EQ(rbln::exit_code(std::filesystem::filesystem_error("cannot write", "/x",
								    std::make_error_code(std::errc::permission_denied))),
		  ExitCode::permission);
	EXPECT_EQ(rbln::exit_code(std::system_error(ENOENT, std::generic_category(), "cannot read")),
		  ExitCode::error) << "a missing file is not a missing NPU";
	errno = EACCES;
	EXPECT_EQ(rbln::exit_code(std::runtime_error("not valid YAML")), ExitCode::error);
}

namespace {

struct Result {
	int exit;
	std::string out;
};

Result run(const std::string &cmd)
{
	Result r{-1, {}};
	FILE *p = ::popen((cmd + " 2>&1").c_str(), "r");
	if (!p)
		return r;
	char buf[4096];
	for (size_t n; (n = fread(buf, 1, sizeof(buf), p)) > 0;)
		r.out.append(buf, n);
	int status = ::pclose(p);
	r.exit = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
	return r;
}

} // namespace

// rbln-ctk's codes are the table's (3 no driver, 5 no NPU: not one code for both).
TEST(ExitCodes, CtkUsesTheTable)
{
	Result help = run(std::string(RBLN_TEST_CTK) + " --help");
	EXPECT_EQ(help.exit, 0);
	EXPECT_NE(help.out.find(rbln::exit_codes_help()), std::string::npos) << help.out;
	EXPECT_EQ(run(std::string(RBLN_TEST_CTK) + " cdi generate --bogus").exit, 2);
	if (std::filesystem::exists("/sys/module/rbln"))
		GTEST_SKIP() << "rbln.ko is loaded here; the VM suite covers the driver's codes";
	Result gen = run(std::string(RBLN_TEST_CTK) + " cdi generate --dry-run");
	EXPECT_EQ(gen.exit, int(ExitCode::no_driver)) << gen.out;
	EXPECT_NE(gen.out.find("not loaded"), std::string::npos) << gen.out;
}

// The command-line codes of the other tools, which need no device; the VM
// suite (tests/integration/test_exit_codes.cpp) drives the device ones.
TEST(ExitCodes, EveryToolsUsageErrorsAreTwo)
{
	const std::string shim = RBLN_TEST_SHIM, plugin = RBLN_TEST_PLUGIN, exporter = RBLN_TEST_EXPORTER;
	for (const auto &bin : {std::string(RBLN_TEST_SMI), std::string(RBLN_TEST_CTK), plugin, exporter}) {
		Result help = run(bin + " --help");
		EXPECT_EQ(help.exit, 0) << bin;
		EXPECT_NE(help.out.find(rbln::exit_codes_help()), std::string::npos) << bin << ": " << help.out;
		EXPECT_EQ(run(bin + " --bogus").exit, int(ExitCode::bad_argument)) << bin;
	}
	EXPECT_EQ(run(plugin + " --resource-mode colour").exit, int(ExitCode::bad_argument));
	EXPECT_NE(run(shim + " --help").out.find(rbln::exit_codes_help()), std::string::npos);
	EXPECT_EQ(run(shim + " --root").exit, int(ExitCode::bad_argument));
	Result listen = run(exporter + " --listen nowhere");
	EXPECT_EQ(listen.exit, int(ExitCode::error)) << listen.out;
	EXPECT_NE(listen.out.find("cannot listen on 'nowhere'"), std::string::npos) << listen.out;
}

TEST(ExitCodes, TheTableListsEachCodeOnceInOrder)
{
	int next = 0;
	for (const auto &row : rbln::exit_code_table)
		EXPECT_EQ(int(row.code), next++) << row.meaning;
	std::string help = rbln::exit_codes_help();
	EXPECT_NE(help.find("  3  rbln driver not loaded\n"), std::string::npos) << help;
	EXPECT_NE(help.find("  7  "), std::string::npos) << help;
	EXPECT_NE(help.find("  8  incomplete result"), std::string::npos) << help;
}

TEST(Statuses, NewStatusesHaveTheirOwnText)
{
	EXPECT_EQ(int(RBLN_ERR_DRIVER_NOT_LOADED), 14);
	EXPECT_EQ(int(RBLN_ERR_NOT_SUPPORTED), 15);
	std::set<std::string> texts;
	for (int s = RBLN_OK; s <= RBLN_ERR_NOT_SUPPORTED; s++) {
		std::string text = rbln_status_string(rbln_status(s));
		EXPECT_NE(text, "unknown status") << s;
		EXPECT_TRUE(texts.insert(text).second) << "two statuses say " << text;
	}
	EXPECT_EQ(rbln::errc_from_errno(EOPNOTSUPP), Errc::not_supported);
}

TEST(LibraryVersion, IsTheProjectVersion)
{
	EXPECT_STREQ(rbln_library_version(), RBLN_PROJECT_VERSION);
}
