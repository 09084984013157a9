// SPDX-License-Identifier: MIT
// rbln-ctk nfd on the VM's NPUs (an ATOM and a Rebel100, tests/vm/suite.sh).
#include <filesystem>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include "child_process.hpp"
#include "manifest_context.hpp"
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

// As deploy/nfd-rbln.yaml runs it: no capability, no new privileges, /dev
// read-only, the features directory its one writable mount.
TEST(Nfd, WorksUnderTheShippedSecurityContext)
{
	const auto ctx = manifest_context("nfd-rbln.yaml", "nfd");
	EXPECT_FALSE(ctx.privileged);
	EXPECT_TRUE(ctx.drop_all);
	char tmpl[] = "/tmp/rbln-nfd-XXXXXX";
	const std::string dir = ::mkdtemp(tmpl);
	std::filesystem::create_directories(dir + "/features.d");
	const std::string ctk = build_dir() + "/cmake/tools/rbln-ctk/rbln-ctk";
	const auto argv = under_context(ctx, {ctk, "nfd", "--output", dir + "/features.d/rbln"},
					{{"/etc/kubernetes/node-feature-discovery/features.d", dir + "/features.d"}});
	auto r = run_shell(shell_command(argv) + " 2>&1");
	ASSERT_EQ(r.exit, 0) << shell_command(argv) << "\n" << r.out;
	auto features = read_file(dir + "/features.d/rbln");
	ASSERT_TRUE(features);
	EXPECT_NE(features->find("rebellions.ai/npu.count=2"), std::string::npos) << *features;
	std::filesystem::remove_all(dir);
}
