// Debian's podman (4.3) as a CDI consumer: `podman run --device
// rebellions.ai/npu=1` on an image with nothing of ours in it.  The VM's root
// is the host's, read-only, so podman keeps everything (storage, run state,
// temporary files) in a directory in /tmp, uses the vfs driver and cgroupfs,
// and the image is imported from a tarball of a bare root file system: no
// registry is needed.
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include <gtest/gtest.h>

#include "container_util.h"

using namespace rbln::test;
namespace fs = std::filesystem;

namespace {

class Podman : public ::testing::Test {
protected:
	static inline std::string dir_, podman_;
	static constexpr const char *kImage = "localhost/rbln-bare:test";

	static void SetUpTestSuite()
	{
		char tmpl[] = "/tmp/rbln-podman-XXXXXX";
		dir_ = ::mkdtemp(tmpl);
		podman_ = isolated_podman(dir_);
		make_bare_rootfs(dir_ + "/rootfs");
		auto tar = run_shell("tar -C " + dir_ + "/rootfs -cf " + dir_ + "/bare.tar . 2>&1");
		ASSERT_EQ(tar.exit, 0) << tar.out;
		auto import = run_shell(podman_ + " import " + dir_ + "/bare.tar " + kImage + " 2>&1");
		ASSERT_EQ(import.exit, 0) << import.out;
	}

	static void TearDownTestSuite()
	{
		run_shell(podman_ + " rm --all --force >/dev/null 2>&1");
		fs::remove("/var/run/cdi/rbln.yaml");
		fs::remove_all(dir_);
	}

	static CommandResult run(const std::string &flags, const std::string &script)
	{
		return run_shell(podman_ + " run --rm --network none " + flags + " " + kImage + " /bin/sh -c '" +
				 script + "' 2>&1");
	}
};

TEST_F(Podman, CdiDeviceGivesOnlyThatNpuWithLibraryAndTool)
{
	auto gen = generate_injected_spec("/var/run/cdi/rbln.yaml");
	ASSERT_EQ(gen.exit, 0) << gen.out;
	auto npu0 = sim_device(0), npu1 = sim_device(1);
	ASSERT_TRUE(npu0 && npu1);

	auto r = run("--device rebellions.ai/npu=1",
		     "ls /dev | grep ^rbln | tr \"\\n\" \" \"; echo \"|\"; ls " + npu1->node + " " + npu0->node +
			     "; /usr/bin/rbln-smi --query npu,uuid --format csv,noheader; echo smi=$?; "
			     "/usr/bin/rbln-smi selftest; echo selftest=$?");
	ASSERT_EQ(r.exit, 0) << r.out;
	EXPECT_NE(r.out.find("rbln1 |"), std::string::npos) << r.out;
	EXPECT_EQ(r.out.find("rbln0"), std::string::npos) << r.out;
	// NPU 1's node is there, NPU 0's is not.
	EXPECT_NE(r.out.find(npu1->node + "\n"), std::string::npos) << r.out;
	EXPECT_NE(r.out.find(npu0->node + ": No such file"), std::string::npos) << r.out;
	// rbln-smi, from the spec's mounts, sees NPU 1 only, and a DMA round
	// trip through every chiplet of it passes.
	const std::string uuid1 = read_file(npu1->sysfs + "/uuid").value_or("?");
	const std::string uuid0 = read_file(npu0->sysfs + "/uuid").value_or("?");
	EXPECT_NE(r.out.find("1, " + uuid1), std::string::npos) << r.out;
	EXPECT_EQ(r.out.find(uuid0), std::string::npos) << r.out;
	EXPECT_NE(r.out.find("smi=0"), std::string::npos) << r.out;
	EXPECT_NE(r.out.find("selftest=0"), std::string::npos) << r.out;
}

TEST_F(Podman, UnknownCdiDeviceIsRefused)
{
	auto gen = generate_injected_spec("/var/run/cdi/rbln.yaml");
	ASSERT_EQ(gen.exit, 0) << gen.out;
	auto r = run("--device rebellions.ai/npu=9", "echo started");
	EXPECT_NE(r.exit, 0) << r.out;
	EXPECT_EQ(r.out.find("started"), std::string::npos) << r.out;
	EXPECT_NE(r.out.find("rebellions.ai/npu=9"), std::string::npos) << r.out;
}

} // namespace
