// The library and tool injection of the CDI spec, and its ldcache hook run
// against a made-up container root (the host's ldconfig, chrooted there).
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "injection.hpp"
#include "ldcache_hook.hpp"

using namespace rbln::ctk;
namespace fs = std::filesystem;

namespace {

struct TempDir {
	fs::path path = fs::temp_directory_path() / ("rbln-inject-test-" + std::to_string(::getpid()));
	TempDir() { fs::create_directories(path); }
	~TempDir() { fs::remove_all(path); }
};

std::string read(const fs::path &p)
{
	std::ifstream in(p, std::ios::binary);
	return {std::istreambuf_iterator<char>(in), {}};
}

} // namespace

TEST(Injection, DependenciesAreResolvedWithoutGlibc)
{
	auto deps = library_dependencies(RBLN_TEST_DEVMGR_SO);
	std::map<std::string, std::string> m(deps.begin(), deps.end());
	EXPECT_TRUE(m.contains("libfmt.so.9"));
	EXPECT_TRUE(m.contains("libstdc++.so.6"));
	EXPECT_TRUE(m.contains("libudev.so.1"));
	EXPECT_FALSE(m.contains("libc.so.6"));
	EXPECT_FALSE(m.contains("libm.so.6"));
	for (auto &[soname, path] : deps)
		EXPECT_TRUE(fs::exists(path)) << soname << " -> " << path;
	EXPECT_THROW(library_dependencies("/etc/hostname"), std::runtime_error);
}

TEST(Injection, ReadOnlyMountsAtTheInstalledPathsAndTheHook)
{
	std::vector<std::string> warnings;
	json e = injection_edits({RBLN_TEST_DEVMGR_SO, RBLN_TEST_SMI, "/opt/rbln-ctk"}, warnings);
	EXPECT_TRUE(warnings.empty());
	std::map<std::string, json> by_target;
	for (auto &m : e["mounts"]) {
		by_target[m["containerPath"]] = m;
		EXPECT_EQ(m["options"][0], "ro") << m.dump();
		EXPECT_FALSE(m.contains("type")) << "a type would need cdiVersion 0.4.0 for nothing";
	}
	ASSERT_TRUE(by_target.contains(container_library_dir() + "/librbln_devmgr.so.0"));
	EXPECT_EQ(by_target[container_library_dir() + "/librbln_devmgr.so.0"]["hostPath"],
		  fs::canonical(RBLN_TEST_DEVMGR_SO).string());
	ASSERT_TRUE(by_target.contains(container_smi_path()));
	EXPECT_TRUE(by_target.contains(container_deps_dir() + "/libfmt.so.9"));
	ASSERT_EQ(e["hooks"].size(), 1u);
	EXPECT_EQ(e["hooks"][0]["hookName"], "createContainer");
	EXPECT_EQ(e["hooks"][0]["path"], "/opt/rbln-ctk");
	EXPECT_EQ(e["hooks"][0]["args"][2], "update-ldcache");

	// What is missing is left out, and said.
	json partial = injection_edits({RBLN_TEST_DEVMGR_SO, "/nonexistent/rbln-smi", "/opt/rbln-ctk"}, warnings);
	ASSERT_EQ(warnings.size(), 1u);
	EXPECT_NE(warnings[0].find("rbln-smi not found at /nonexistent/rbln-smi"), std::string::npos) << warnings[0];
	for (auto &m : partial["mounts"])
		EXPECT_NE(m["containerPath"], container_smi_path());
}

TEST(LdcacheHook, RootFromTheOciState)
{
	TempDir d;
	std::ofstream(d.path / "config.json") << R"({"root": {"path": "rootfs"}})";
	std::istringstream state(R"({"ociVersion": "1.0.2", "id": "x", "status": "creating", "bundle": ")" +
				 d.path.string() + "\"}");
	EXPECT_EQ(container_root_from_state(state), (d.path / "rootfs").string());
	std::istringstream junk("not json");
	EXPECT_THROW(container_root_from_state(junk), std::runtime_error);
	std::istringstream no_bundle(R"({"id": "x"})");
	EXPECT_THROW(container_root_from_state(no_bundle), std::runtime_error);
}

// The hook as the runtime runs it: state on stdin, then the container root
// has a loader cache that lists the injected library's dependencies.
TEST(LdcacheHook, WritesTheContainersCache)
{
	TempDir d;
	fs::path root = d.path / "rootfs";
	fs::path deps = root / fs::path(container_deps_dir()).relative_path();
	fs::create_directories(deps);
	fs::copy_file(fs::canonical("/usr/lib/x86_64-linux-gnu/libfmt.so.9"), deps / "libfmt.so.9");
	std::ofstream(d.path / "config.json") << R"({"root": {"path": ")" + root.string() + "\"}}";
	std::ofstream(d.path / "state.json") << R"({"bundle": ")" + d.path.string() + "\"}";
	std::string cmd = std::string(RBLN_TEST_CTK) + " hook update-ldcache --folder " + container_library_dir() +
			  " --folder " + container_deps_dir() + " < " + (d.path / "state.json").string() + " 2>/dev/null";
	ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
	std::string cache = read(root / "etc/ld.so.cache");
	EXPECT_NE(cache.find(container_deps_dir() + "/libfmt.so.9"), std::string::npos);
	EXPECT_FALSE(fs::exists(root / "etc/ld.so.conf")) << "the hook only writes the cache";

	// Bad input: a clear failure, nothing written.
	std::ofstream(d.path / "state.json") << "{}";
	EXPECT_NE(std::system(cmd.c_str()), 0);
}
