// SPDX-License-Identifier: MIT
#include "sample.hpp"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <set>

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <fmt/format.h>

#include "rbln/devmgr.hpp"
#include "rbln/enumerate.hpp"
#include "rbln/figures.hpp"

namespace rbln::exporter {

namespace {

// One sysfs attribute kept open: sysfs makes a fresh value at each read from
// offset 0, so a scrape costs one pread per figure, no open or close.
class Attr {
public:
	explicit Attr(std::string path) : path_(std::move(path)) {}
	~Attr()
	{
		if (fd_ >= 0)
			::close(fd_);
	}
	Attr(const Attr &) = delete;
	Attr &operator=(const Attr &) = delete;

	// The first line; errno on failure (ENODEV: the device is gone).
	std::string read(int *err)
	{
		*err = 0;
		if (fd_ < 0 && (fd_ = ::open(path_.c_str(), O_RDONLY | O_CLOEXEC)) < 0) {
			*err = errno;
			return {};
		}
		char buf[128];
		ssize_t n = ::pread(fd_, buf, sizeof(buf) - 1, 0);
		if (n < 0) {
			*err = errno;
			return {};
		}
		std::string s(buf, size_t(n));
		return s.substr(0, s.find('\n'));
	}

	const std::string &path() const { return path_; }

private:
	std::string path_;
	int fd_ = -1;
};

struct ChipletAttrs {
	unsigned index;
	uint64_t memory_total;
	std::unique_ptr<Attr> memory_used, engine_resets, status;
	std::vector<std::pair<std::string, std::unique_ptr<Attr>>> busy;	// engine name -> _busy_ns
};

// What stays of an NPU between scrapes: identity, static figures, open attributes.
struct CachedNpu {
	rbln::NpuInfo info;
	std::string firmware_version;
	std::unique_ptr<Attr> status, temperature, power_draw, utilization, memory_used, faults, memory_errors,
		engine_resets;
	std::vector<ChipletAttrs> chiplets;
};

std::unique_ptr<Attr> attr(const std::string &dir, const std::string &name)
{
	return std::make_unique<Attr>(dir + "/" + name);
}

CachedNpu cache_npu(const rbln::NpuInfo &npu)
{
	const std::string &d = npu.sysfs;
	CachedNpu c{npu, rbln::npu_figures(npu).firmware_version, attr(d, "status"), attr(d, "temperature"),
		    attr(d, "power_draw"), attr(d, "utilization"), attr(d, "memory_used"), attr(d, "faults"),
		    attr(d, "memory_errors"), attr(d, "engine_resets"), {}};
	for (const auto &f : rbln::chiplet_figures(npu)) {
		const std::string cd = fmt::format("{}/chiplet{}", d, f.index);
		ChipletAttrs ca{f.index, f.memory.total, attr(cd, "memory_used"), attr(cd, "engine_resets"),
				attr(cd, "status"), {}};
		for (const auto &e : f.engines)
			ca.busy.emplace_back(e.name, attr(cd, e.name + "_busy_ns"));
		c.chiplets.push_back(std::move(ca));
	}
	return c;
}

// The entries of /sys/class/accel and /sys/class/drm: when they change, NPUs
// came or went, and only then is the (costlier) enumeration redone.
std::set<std::string> class_entries()
{
	std::set<std::string> out;
	for (const char *cls : {"/sys/class/accel", "/sys/class/drm"})
		if (DIR *d = ::opendir(cls)) {
			while (dirent *e = ::readdir(d))
				out.insert(std::string(cls) + "/" + e->d_name);
			::closedir(d);
		}
	return out;
}

struct Reader {
	std::mutex mutex;
	std::set<std::string> entries;
	std::map<std::string, CachedNpu> npus;	// by sysfs directory
	bool stale = true;

	void refresh()
	{
		auto now = class_entries();
		if (!stale && now == entries)
			return;
		entries = std::move(now);
		stale = false;
		std::map<std::string, CachedNpu> fresh;
		for (const auto &npu : rbln::enumerate_all_npus()) {
			auto old = npus.find(npu.sysfs);
			if (old != npus.end() && old->second.info.uuid == npu.uuid) {
				fresh.emplace(npu.sysfs, std::move(old->second));
				continue;
			}
			try {
				fresh.emplace(npu.sysfs, cache_npu(npu));
			} catch (const rbln::Error &) {
				// Removed while being read: gone for this scrape.
			}
		}
		npus = std::move(fresh);
	}
};

Reader &reader()
{
	static Reader r;
	return r;
}

// Reads one figure; records the first failure in @error.
uint64_t number(Attr &a, std::optional<std::string> &error, bool &gone)
{
	int err;
	std::string s = a.read(&err);
	if (err) {
		gone = gone || err == ENODEV || err == ENOENT;
		if (!error)
			error = fmt::format("reading {}: {}", a.path(), std::strerror(err));
		return 0;
	}
	return std::strtoull(s.c_str(), nullptr, 10);
}

} // namespace

std::vector<NpuSample> sample_npus()
{
	auto &r = reader();
	std::lock_guard lock(r.mutex);
	r.refresh();
	const std::string driver = rbln::driver_version();
	std::vector<NpuSample> out;
	for (auto &[dir, c] : r.npus) {
		NpuSample s{c.info.index, c.info.uuid, c.info.name, driver, c.firmware_version, {}, 0, 0, 0, 0,
			    c.info.memory_total, 0, 0, 0, {}, std::nullopt, std::nullopt};
		bool gone = false;
		int err;
		s.status = c.status->read(&err);
		if (err) {
			gone = err == ENODEV || err == ENOENT;
			s.error = fmt::format("reading {}: {}", c.status->path(), std::strerror(err));
		}
		s.temperature_c = double(int64_t(number(*c.temperature, s.error, gone))) / 1000.0;
		s.power_w = double(number(*c.power_draw, s.error, gone)) / 1e6;
		s.utilization = unsigned(number(*c.utilization, s.error, gone));
		s.memory_used = number(*c.memory_used, s.error, gone);
		s.faults = number(*c.faults, s.error, gone);
		s.memory_errors = number(*c.memory_errors, s.error, gone);
		s.engine_resets = number(*c.engine_resets, s.error, gone);
		for (auto &ca : c.chiplets) {
			ChipletSample cs{ca.index, number(*ca.memory_used, s.error, gone), ca.memory_total, {},
					 unsigned(number(*ca.engine_resets, s.error, gone)), false};
			int serr;
			cs.lost = ca.status->read(&serr) == "lost";
			for (auto &[name, a] : ca.busy)
				cs.engines.push_back({name, number(*a, s.error, gone)});
			s.chiplets.push_back(std::move(cs));
		}
		if (gone) {
			r.stale = true;	// removed: enumerate again next time
			continue;
		}
		out.push_back(std::move(s));
	}
	std::ranges::sort(out, {}, &NpuSample::index);
	return out;
}

} // namespace rbln::exporter
