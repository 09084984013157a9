// SPDX-License-Identifier: MIT
// rbln-ctk nfd on the VM's NPUs (an ATOM and a Rebel100, tests/vm/suite.sh).
#include <filesystem>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "child_process.hpp"
#include "rbln_test_util.h"

using namespace rbln::test;

TEST(Nfd, FeatureFileDescribesTheNpus)
{
	char tmpl[] = "/tmp/rbln-nfd-XXXXXX";
	const std::string dir = ::mkdtemp(tmpl);
	const std::string ctk = build_dir() + "/cmake/tools/rbln-ctk/rbln-ctk";
	auto r = run_shell(fmt::format("{} nfd --output {}/features.d/rbln 2>&1", ctk, dir));
	ASSERT_EQ(r.exit, 0) << r.out;
	auto driver = read_file("/sys/module/rbln/version");
	ASSERT_TRUE(driver);
	EXPECT_EQ(read_file(dir + "/features.d/rbln"),
		  "rebellions.ai/npu.present=true\n"
		  "rebellions.ai/npu.count=2\n"
		  "rebellions.ai/npu.product=RBLN-CA12.RBLN-CR03\n"
		  "rebellions.ai/npu.driver-version=" + *driver + "\n"
		  "rebellions.ai/npu.chiplet-count=1");	// read_file drops the last newline

	auto bad = run_shell(fmt::format("{} nfd --outptu x 2>&1", ctk));
	EXPECT_EQ(bad.exit, 2);
	EXPECT_NE(bad.out.find("--outptu"), std::string::npos) << bad.out;
	std::filesystem::remove_all(dir);
}
