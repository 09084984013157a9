// Device nodes after udev: /dev/rblnN and stable links point at the right node,
// owned by root:rbln with mode 0660, and only group members can open them.
#include <filesystem>
#include <sstream>

#include <fcntl.h>
#include <grp.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "rbln_test_util.h"

namespace fs = std::filesystem;
using namespace rbln::test;

namespace {

class Nodes : public ::testing::Test {
protected:
	void SetUp() override
	{
		udev_settle();
		devices_ = sim_devices();
		ASSERT_GE(devices_.size(), 2u) << "suite loads rbln with sim_devices=atom,rebel100";
	}
	std::vector<SimDevice> devices_;
};

// Opens @node in a child running as uid/gid 65534 with @groups; returns errno or 0.
int open_as_nobody(const std::string &node, std::vector<gid_t> groups)
{
	pid_t pid = fork();
	if (pid == 0) {
		if (setgroups(groups.size(), groups.data()) || setresgid(65534, 65534, 65534) ||
		    setresuid(65534, 65534, 65534))
			_exit(200);
		int fd = open(node.c_str(), O_RDWR);
		_exit(fd < 0 ? errno : 0);
	}
	int status = 0;
	waitpid(pid, &status, 0);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 255;
}

// The udev tags a node has now (CURRENT_TAGS; TAGS keeps every tag it ever
// had), which 73-seat-late.rules acts on: ":a:b:".
std::string current_tags(const std::string &node)
{
	auto info = run_shell("udevadm info --query=property --name=" + node);
	EXPECT_EQ(info.exit, 0) << info.out;
	std::istringstream lines(info.out);
	for (std::string line; std::getline(lines, line);)
		if (line.starts_with("CURRENT_TAGS="))
			return line.substr(13);
	return {};
}

} // namespace

TEST_F(Nodes, NodeTypeFollowsKernel)
{
	for (const auto &d : devices_) {
		if (kernel_has_accel())
			EXPECT_TRUE(d.node.starts_with("/dev/accel/accel")) << d.node;
		else
			EXPECT_TRUE(d.node.starts_with("/dev/dri/renderD")) << d.node;
	}
}

TEST_F(Nodes, RblnLinkPointsAtTheDeviceNode)
{
	for (const auto &d : devices_) {
		std::string link = "/dev/rbln" + std::to_string(d.index);
		ASSERT_TRUE(fs::is_symlink(link)) << link;
		EXPECT_EQ(fs::canonical(link), fs::path(d.node)) << link;
	}
}

TEST_F(Nodes, StableLinksByUuidAndPath)
{
	for (const auto &d : devices_) {
		auto uuid = read_file(d.sysfs + "/uuid");
		auto bus = read_file(d.sysfs + "/pci_bus_id");
		ASSERT_TRUE(uuid && bus);
		EXPECT_EQ(fs::canonical("/dev/rbln/by-uuid/" + *uuid), fs::path(d.node));
		EXPECT_EQ(fs::canonical("/dev/rbln/by-path/pci-" + *bus), fs::path(d.node));
	}
}

TEST_F(Nodes, OwnedByRootGroupRblnMode0660)
{
	struct group *grp = getgrnam("rbln");
	ASSERT_NE(grp, nullptr) << "group rbln must exist (udev/rbln.sysusers)";
	for (const auto &d : devices_) {
		struct stat st {};
		ASSERT_EQ(stat(d.node.c_str(), &st), 0) << d.node;
		EXPECT_TRUE(S_ISCHR(st.st_mode));
		EXPECT_EQ(st.st_mode & 07777, 0660u) << d.node;
		EXPECT_EQ(st.st_uid, 0u);
		EXPECT_EQ(st.st_gid, grp->gr_gid) << d.node;
	}
}

TEST_F(Nodes, OnlyGroupMembersCanOpen)
{
	struct group *grp = getgrnam("rbln");
	ASSERT_NE(grp, nullptr);
	for (const auto &d : devices_) {
		EXPECT_EQ(open_as_nobody(d.node, {}), EACCES) << d.node;
		EXPECT_EQ(open_as_nobody(d.node, {grp->gr_gid}), 0) << d.node;
		// systemd tags every render node for the seat user (an ACL without the group).
		EXPECT_EQ(current_tags(d.node).find(":uaccess:"), std::string::npos) << d.node;
	}
}

// The primary node (cardN, only on kernels without DRM accel) is not the
// group's: its first opener would become DRM master, and GEM_FLINK/GEM_OPEN
// there share buffers across users by guessable names.
TEST_F(Nodes, CardNodeIsNotTheGroups)
{
	struct group *grp = getgrnam("rbln");
	ASSERT_NE(grp, nullptr);
	size_t cards = 0;
	for (const auto &d : devices_) {
		std::error_code ec;
		for (const auto &e : fs::directory_iterator(d.sysfs + "/drm", ec)) {
			std::string name = e.path().filename();
			if (!name.starts_with("card"))
				continue;
			cards++;
			std::string node = "/dev/dri/" + name;
			struct stat st {};
			ASSERT_EQ(stat(node.c_str(), &st), 0) << node;
			EXPECT_EQ(st.st_uid, 0u) << node;
			EXPECT_EQ(st.st_gid, 0u) << node << ": systemd's default would be group video";
			EXPECT_EQ(st.st_mode & 077, 0u) << node << std::oct << ": mode " << (st.st_mode & 0777);
			EXPECT_EQ(open_as_nobody(node, {grp->gr_gid}), EACCES) << node;
			if (struct group *video = getgrnam("video")) {
				EXPECT_EQ(open_as_nobody(node, {video->gr_gid}), EACCES) << node;
			}
			// No seat's: 73-seat-late.rules would give the seat user an ACL.
			std::string tags = current_tags(node);
			EXPECT_EQ(tags.find(":uaccess:"), std::string::npos) << node << ": " << tags;
			EXPECT_EQ(tags.find(":seat:"), std::string::npos) << node << ": " << tags;
		}
	}
	if (kernel_has_accel())
		EXPECT_EQ(cards, 0u) << "an accel device has no primary node";
	else
		EXPECT_EQ(cards, devices_.size()) << "one primary node per device";
}
