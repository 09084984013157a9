// What /proc/<pid>/fdinfo says of rbln files (the DRM fdinfo keys, where the
// kernel has them: DRM_RBLN_CAP_FDINFO): which processes hold a client's file,
// and its engines' busy time.  The one reader of that format here.
#include <cctype>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "device_state.h"
#include "rbln/figures.hpp"
#include "rbln_drm.h"

RBLN_CXX_ABI_BEGIN
namespace detail {

// One fdinfo file's "key:\tvalue" lines; nullopt unless it is an rbln file.
std::optional<FdinfoFile> parse_fdinfo(std::istream &in)
{
	static const char *const engines[] = {"neural_dma", "task_dma", "device_hdma", "external_hdma"};
	static_assert(std::size(engines) == DRM_RBLN_ENGINE_COUNT);
	FdinfoFile f;
	bool rbln = false;
	for (std::string line; std::getline(in, line);) {
		auto colon = line.find(':');
		if (colon == std::string::npos)
			continue;
		const std::string key = line.substr(0, colon);
		std::istringstream value(line.substr(colon + 1));
		if (key == "drm-driver") {
			std::string name;
			value >> name;
			rbln = name == "rbln";
		} else if (key == "drm-client-id") {
			uint64_t id;
			if (value >> id)
				f.client_id = id;
		} else if (key.starts_with("drm-engine-")) {
			uint64_t ns;
			std::string unit;
			for (size_t e = 0; e < std::size(engines); e++)
				if (key.substr(11) == engines[e] && value >> ns >> unit && unit == "ns")
					f.engine_busy_ns[e] = ns;
		}
	}
	if (!rbln || !f.client_id)
		return std::nullopt;
	return f;
}

std::map<uint64_t, FileHolders> rbln_files_of_processes()
{
	namespace fs = std::filesystem;
	std::map<uint64_t, FileHolders> files;
	std::error_code ec;
	for (const auto &proc : fs::directory_iterator("/proc", ec)) {
		const std::string name = proc.path().filename();
		if (name.empty() || !std::isdigit(static_cast<unsigned char>(name[0])))
			continue;
		const unsigned pid = unsigned(std::stoul(name));
		std::error_code fd_ec;	// another user's, or gone meanwhile: skipped
		for (const auto &fd : fs::directory_iterator(proc.path() / "fdinfo", fd_ec)) {
			std::ifstream in(fd.path());
			auto f = parse_fdinfo(in);
			if (!f)
				continue;
			FileHolders &h = files[*f->client_id];
			if (h.pids.empty() || h.pids.back() != pid)
				h.pids.push_back(pid);
			h.engine_busy_ns = f->engine_busy_ns;
		}
	}
	return files;
}

std::string comm_of(unsigned pid)
{
	std::ifstream in(fmt::format("/proc/{}/comm", pid));
	std::string comm;
	std::getline(in, comm);
	return comm;
}

} // namespace detail

std::vector<unsigned> client_holder_pids(uint64_t client_id)
{
	auto files = detail::rbln_files_of_processes();
	auto it = files.find(client_id);
	return it == files.end() ? std::vector<unsigned>{} : it->second.pids;
}

std::vector<ProcessUsage> process_usage(const NpuInfo &npu)
{
	auto clients = Device::open_path(npu.node).clients();
	auto files = detail::rbln_files_of_processes();
	std::vector<ProcessUsage> out;
	for (const auto &c : clients) {
		if (c.self)
			continue;
		auto it = files.find(c.client_id);
		std::vector<unsigned> pids = it != files.end() ? it->second.pids : std::vector<unsigned>{};
		if (pids.empty() && c.creator_pid)
			pids.push_back(c.creator_pid);	// no fdinfo here, or not this user's to read
		for (unsigned pid : pids) {
			ProcessUsage u{npu.index, pid, detail::comm_of(pid), c.client_id, c.device_memory,
				       c.stale, std::nullopt};
			if (u.command.empty())
				u.command = c.creator_comm;
			if (it != files.end()) {
				std::array<uint64_t, 4> busy{};
				bool all = true;
				for (size_t e = 0; e < busy.size(); e++) {
					all &= it->second.engine_busy_ns[e].has_value();
					busy[e] = it->second.engine_busy_ns[e].value_or(0);
				}
				if (all)
					u.engine_busy_ns = busy;
			}
			out.push_back(std::move(u));
		}
	}
	return out;
}

RBLN_CXX_ABI_END // namespace rbln
