// The one table from libdevmgr statuses to tool exit codes, the new statuses
// and rbln_library_version().
#include <set>
#include <string>

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

TEST(ExitCodes, TheTableListsEachCodeOnceInOrder)
{
	int next = 0;
	for (const auto &row : rbln::exit_code_table)
		EXPECT_EQ(int(row.code), next++) << row.meaning;
	std::string help = rbln::exit_codes_help();
	EXPECT_NE(help.find("  3  rbln driver not loaded\n"), std::string::npos) << help;
	EXPECT_NE(help.find("  7  "), std::string::npos) << help;
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
