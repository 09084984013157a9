// SPDX-License-Identifier: MIT
#include "injection.hpp"

#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <set>
#include <stdexcept>
#include <system_error>

#include <dlfcn.h>
#include <fcntl.h>
#include <gelf.h>
#include <link.h>
#include <unistd.h>

#include <fmt/format.h>

#include "text.hpp"

#ifndef RBLN_LIBDIR
#define RBLN_LIBDIR "/usr/lib/x86_64-linux-gnu"
#endif
#ifndef RBLN_BINDIR
#define RBLN_BINDIR "/usr/bin"
#endif

namespace rbln::ctk {

namespace fs = std::filesystem;

namespace {

constexpr const char *kLibrary = "librbln_devmgr.so.0";

// glibc's libraries come with the image: the container's own must be used.
bool part_of_glibc(const std::string &soname)
{
	static const std::set<std::string> glibc = {"libc.so.6", "libm.so.6", "libpthread.so.0", "libdl.so.2",
						    "librt.so.1", "libresolv.so.2", "libutil.so.1", "libanl.so.1",
						    "libmvec.so.1", "libBrokenLocale.so.1", "libnss_files.so.2"};
	return glibc.contains(soname) || soname.starts_with("ld-linux");
}

std::vector<std::string> needed(const std::string &file)
{
	elf_version(EV_CURRENT);
	int fd = ::open(file.c_str(), O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		int err = errno;
		throw std::system_error(err, std::generic_category(), fmt::format("cannot read {}", file));
	}
	Elf *elf = elf_begin(fd, ELF_C_READ, nullptr);
	if (elf && elf_kind(elf) != ELF_K_ELF) {
		elf_end(elf);
		elf = nullptr;
	}
	std::vector<std::string> out;
	for (Elf_Scn *scn = nullptr; elf && (scn = elf_nextscn(elf, scn));) {
		GElf_Shdr shdr;
		if (!gelf_getshdr(scn, &shdr) || shdr.sh_type != SHT_DYNAMIC)
			continue;
		Elf_Data *data = elf_getdata(scn, nullptr);
		for (size_t i = 0; data && i < shdr.sh_size / shdr.sh_entsize; i++) {
			GElf_Dyn dyn;
			if (gelf_getdyn(data, int(i), &dyn) && dyn.d_tag == DT_NEEDED)
				if (const char *name = elf_strptr(elf, shdr.sh_link, dyn.d_un.d_val))
					out.emplace_back(name);
		}
	}
	bool ok = elf != nullptr;
	if (elf)
		elf_end(elf);
	::close(fd);
	if (!ok)
		throw std::runtime_error(fmt::format("{} is not an ELF file", file));
	return out;
}

// Where the dynamic loader finds @soname for this process.
std::string loader_path(const std::string &soname)
{
	void *h = ::dlopen(soname.c_str(), RTLD_LAZY | RTLD_LOCAL);
	if (!h)
		return "";
	struct link_map *map = nullptr;
	std::string path;
	if (::dlinfo(h, RTLD_DI_LINKMAP, &map) == 0 && map && map->l_name)
		path = map->l_name;
	::dlclose(h);
	return path;
}

std::string self_path()
{
	std::error_code ec;
	return fs::canonical("/proc/self/exe", ec).string();
}

std::string in_path(const std::string &name)
{
	const char *path = std::getenv("PATH");
	for (const auto &d : split(path ? path : "/usr/bin:/bin", ':'))
		if (!d.empty() && ::access((fs::path(d) / name).c_str(), X_OK) == 0)
			return (fs::path(d) / name).string();
	return "";
}

json read_only_mount(const std::string &host, const std::string &container)
{
	std::error_code ec;
	return {{"hostPath", fs::canonical(host, ec).string()}, {"containerPath", container},
		{"options", {"ro", "nosuid", "nodev", "bind"}}};
}

} // namespace

std::string container_library_dir() { return RBLN_LIBDIR; }
std::string container_smi_path() { return std::string(RBLN_BINDIR) + "/rbln-smi"; }
std::string container_deps_dir() { return std::string(RBLN_LIBDIR) + "/rbln"; }

std::vector<std::pair<std::string, std::string>> library_dependencies(const std::string &file)
{
	std::map<std::string, std::string> found;
	std::vector<std::string> todo = needed(file);
	while (!todo.empty()) {
		std::string soname = todo.back();
		todo.pop_back();
		if (part_of_glibc(soname) || found.contains(soname))
			continue;
		std::string path = loader_path(soname);
		if (path.empty())
			throw std::runtime_error(fmt::format("{} needs {}, which the dynamic loader cannot find",
							     file, soname));
		found[soname] = path;
		for (auto &n : needed(path))
			todo.push_back(n);
	}
	return {found.begin(), found.end()};
}

json injection_edits(const InjectionOptions &opt, std::vector<std::string> &warnings)
{
	auto pick = [](const std::string &given, const std::string &installed, auto search) {
		if (!given.empty())
			return given;
		return fs::exists(installed) ? installed : search();
	};
	std::string library = pick(opt.library, container_library_dir() + "/" + kLibrary,
				   [] { return loader_path(kLibrary); });
	std::string smi = pick(opt.smi, container_smi_path(), [] { return in_path("rbln-smi"); });

	json mounts = json::array();
	std::map<std::string, std::string> deps;
	for (auto [host, container, what] : {std::tuple{library, container_library_dir() + "/" + kLibrary, kLibrary},
					     std::tuple{smi, container_smi_path(), "rbln-smi"}}) {
		if (host.empty() || !fs::exists(host)) {
			warnings.push_back(fmt::format("{} not found{}: containers get no {} (--library, --smi "
						       "name the files)", what, host.empty() ? "" : " at " + host, what));
			continue;
		}
		if (::access(host.c_str(), R_OK) != 0) {
			int err = errno;
			throw std::system_error(err, std::generic_category(), fmt::format("cannot read {}", host));
		}
		mounts.push_back(read_only_mount(host, container));
		for (auto &[soname, path] : library_dependencies(host))
			if (soname != kLibrary)
				deps[soname] = path;
	}
	if (mounts.empty())
		return json::object();
	for (auto &[soname, path] : deps)
		mounts.push_back(read_only_mount(path, container_deps_dir() + "/" + soname));

	std::string ctk = opt.ctk.empty() ? self_path() : opt.ctk;
	json hook = {{"hookName", "createContainer"}, {"path", ctk},
		     {"args", {"rbln-ctk", "hook", "update-ldcache", "--folder", container_library_dir(),
			       "--folder", container_deps_dir()}}};
	return {{"mounts", mounts}, {"hooks", {hook}}};
}

} // namespace rbln::ctk
