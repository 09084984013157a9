#include "container_util.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace rbln::test {

namespace fs = std::filesystem;

std::string cmake_build_dir()
{
	const char *build = std::getenv("RBLN_BUILD");
	const char *top = std::getenv("RBLN_TOP");
	return (build && *build ? std::string(build) : std::string(top ? top : ".") + "/build") + "/cmake";
}

void make_bare_rootfs(const std::string &dir)
{
	const fs::path root = dir;
	for (const char *d : {"bin", "dev", "proc", "sys", "tmp", "lib/x86_64-linux-gnu", "lib64"})
		fs::create_directories(root / d);
	fs::copy_file("/bin/busybox", root / "bin/busybox", fs::copy_options::overwrite_existing);
	fs::create_symlink("busybox", root / "bin/sh");
	for (const char *lib : {"libc.so.6", "libm.so.6"})
		fs::copy_file(fs::canonical(fs::path("/lib/x86_64-linux-gnu") / lib), root / "lib/x86_64-linux-gnu" / lib);
	fs::copy_file(fs::canonical("/lib64/ld-linux-x86-64.so.2"), root / "lib64/ld-linux-x86-64.so.2");
}

std::string isolated_podman(const std::string &dir)
{
	fs::create_directories(dir + "/tmp");
	std::ofstream(dir + "/containers.conf")
		<< "[containers]\nlog_driver = \"k8s-file\"\n\n"
		<< "[engine]\ncgroup_manager = \"cgroupfs\"\nevents_logger = \"file\"\n"
		<< "image_copy_tmp_dir = \"" << dir << "/tmp\"\n";
	return "CONTAINERS_CONF=" + dir + "/containers.conf TMPDIR=" + dir + "/tmp podman --root " + dir +
	       "/storage --runroot " + dir + "/run --tmpdir " + dir + "/libpod --storage-driver vfs";
}

CommandResult generate_injected_spec(const std::string &output)
{
	const std::string build = cmake_build_dir();
	return run_shell(build + "/tools/rbln-ctk/rbln-ctk cdi generate --output " + output + " --library " + build +
			 "/libdevmgr/librbln_devmgr.so.0 --smi " + build + "/tools/rbln-smi/rbln-smi 2>&1");
}

} // namespace rbln::test
