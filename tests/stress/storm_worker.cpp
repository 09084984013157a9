// A storm worker keeps a few open files of random devices, their buffers,
// mappings, exported dma-bufs and job numbers, and does one random operation
// after another: mostly valid, some deliberately invalid.  It may fork a child
// that inherits its files and outlives it.  The supervisor kills workers at
// random moments, so every operation can be cut off anywhere.
#include "storm_worker.h"

#include <algorithm>
#include <array>
#include <csetjmp>
#include <csignal>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include <fcntl.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <fmt/format.h>

#include "rbln_drm.h"
#include "storm_devices.h"
#include "storm_limits.h"
#include "storm_stats.h"

namespace storm {
namespace {

// What a worker knows of a buffer, to build copies the driver accepts.
struct Bo {
	uint32_t handle;
	uint64_t size;
	uint32_t chiplet;	// as created; DRM_RBLN_CHIPLET_INTERLEAVED spans all
	bool host;
};

struct File {
	int fd;
	std::string node;
	DeviceLimits lim;
	std::vector<Bo> bos;
	std::vector<uint64_t> seqnos;		// jobs not waited for yet
	std::vector<uint64_t> chain_ends;	// those of them that end a chain
	std::vector<uint64_t> timeline_ends;	// those that end a timeline pair
};

struct Mapping {
	void *addr;
	size_t len;
};

sigjmp_buf sigbus_jump;

void on_sigbus(int)
{
	siglongjmp(sigbus_jump, 1);
}

int call(int fd, unsigned long request, void *arg)
{
	return ::ioctl(fd, request, arg) ? errno : 0;
}

// How many accepted broken requests are printed: a driver that takes one kind
// takes thousands in a storm.
constexpr uint64_t kAcceptedShown = 20;

// For a request the driver must refuse: if it was @accepted the storm fails,
// and a line says which request it was, with its arguments (@describe()).
// The line is one write(), so it is whole even if this worker is killed next.
template <typename Describe> void fail_if_accepted(bool accepted, Describe describe)
{
	if (!accepted || ++stats().accepted_broken > kAcceptedShown)
		return;
	std::string line = fmt::format("storm: FAILED: the driver accepted {}\n", describe());
	(void)!::write(STDOUT_FILENO, line.data(), line.size());
}

// Every field of a SUBMIT (or batch element) and of its copies where
// .copies still points at @copies.
std::string describe(const drm_rbln_submit &s, const std::vector<drm_rbln_copy> &copies)
{
	std::string text = fmt::format("engine {} chiplet {} flags {:#x} reserved {} reserved2 {} "
				       "copy_count {} copy_size {} copies {:#x} in_sync_count {} out_sync {}",
				       s.engine, s.chiplet, s.flags, s.reserved, s.reserved2, s.copy_count,
				       s.copy_size, s.copies, s.in_sync_count, s.out_sync.handle);
	if (s.copies != reinterpret_cast<uintptr_t>(copies.data()))
		return text;
	for (size_t i = 0; i < copies.size(); i++) {
		const drm_rbln_copy &c = copies[i];
		text += fmt::format("; copy {}: handle {} +{} -> handle {} +{}, {} bytes", i, c.src_handle,
				    c.src_offset, c.dst_handle, c.dst_offset, c.size);
	}
	return text;
}

class Worker {
public:
	explicit Worker(const WorkerOptions &opts) : opts_(opts), rng_(opts.seed) {}

	[[noreturn]] void run()
	{
		while (std::chrono::steady_clock::now() < opts_.deadline)
			step();
		::_exit(0);
	}

private:
	uint64_t below(uint64_t n) { return std::uniform_int_distribution<uint64_t>(0, n - 1)(rng_); }
	bool chance(unsigned percent) { return below(100) < percent; }
	template <typename T> T &pick(std::vector<T> &v) { return v[below(v.size())]; }

	File *any_file()
	{
		if (files_.empty())
			open_file();
		return files_.empty() ? nullptr : &pick(files_);
	}

	uint32_t any_handle(File &f)
	{
		// A made-up handle now and then: the driver must say ENOENT.
		if (f.bos.empty() || chance(5))
			return static_cast<uint32_t>(below(64));
		return pick(f.bos).handle;
	}

	// A file revoked by RECLAIM or RESET answers everything with ENODEV:
	// let it go and open a fresh one.
	void after(File &f, int err)
	{
		if (err == ENODEV && chance(50)) {
			::close(f.fd);
			f.fd = -1;
			std::erase_if(files_, [](const File &x) { return x.fd < 0; });
		}
	}

	// The mix: mostly the paths a runtime takes, with the disruptive calls
	// (acquire, reclaim, reset) rare enough that work still gets done.
	void step()
	{
		static const std::vector<double> weights = {
			3, 2, 10, 2, 4, 2, 3, 14, 3, 8, 3, 1, 3, 1, 0.2, 3, 0.5, 3, 4, 0.5, 2,
		};
		std::discrete_distribution<unsigned> mix(weights.begin(), weights.end());
		switch (mix(rng_)) {
		case 0: open_file(); break;
		case 1: close_file(); break;
		case 2: bo_create(); break;
		case 3: bo_create_invalid(); break;
		case 4: gem_close(); break;
		case 5: bo_info(); break;
		case 6: mmap_touch(); break;
		case 7: submit(); break;
		case 8: submit_broken(); break;
		case 9: wait(); break;
		case 10: prime(); break;
		case 11: acquire_release(); break;
		case 12: list_clients(); break;
		case 13: reclaim(); break;
		case 14: reset(); break;
		case 15: query(); break;
		case 16: fork_child(); break;
		case 17: munmap_one(); break;
		case 18: submit_batch(); break;
		case 19: huge_job(); break;
		default: timeline_chain(); break;
		}
	}

	void open_file()
	{
		if (files_.size() >= 4)
			return;
		auto nodes = device_nodes();
		if (nodes.empty())
			return;
		const std::string &node = pick(nodes);
		int fd = ::open(node.c_str(), O_RDWR | O_CLOEXEC);
		stats().record(Op::Open, fd < 0 ? errno : 0);
		if (fd < 0)
			return;
		DeviceLimits lim;	// unread (a revoked file): no engines, so no job is built for it
		read_limits(fd, lim);
		files_.push_back({fd, node, lim, {}, {}, {}, {}});
	}

	void close_file()
	{
		if (files_.empty())
			return;
		size_t i = below(files_.size());
		stats().record(Op::Close, ::close(files_[i].fd) ? errno : 0);
		files_.erase(files_.begin() + static_cast<long>(i));
	}

	void bo_create()
	{
		File *f = any_file();
		if (!f || f->bos.size() >= 32)
			return;
		drm_rbln_bo_create c{};
		c.size = (1 + below(64)) * 4096 + (chance(20) ? below(4096) : 0);
		c.flags = (chance(30) ? DRM_RBLN_BO_EAGER : 0) | (chance(20) ? DRM_RBLN_BO_HOST : 0);
		c.chiplet = chance(20) ? DRM_RBLN_CHIPLET_INTERLEAVED : static_cast<uint32_t>(below(f->lim.chiplets));
		if (c.flags & DRM_RBLN_BO_HOST)
			c.chiplet = 0;
		int err = call(f->fd, DRM_IOCTL_RBLN_BO_CREATE, &c);
		stats().record(Op::BoCreate, err);
		if (!err)
			f->bos.push_back({c.handle, (c.size + 4095) & ~4095ULL, c.chiplet,
					  (c.flags & DRM_RBLN_BO_HOST) != 0});
		after(*f, err);
	}

	void bo_create_invalid()
	{
		File *f = any_file();
		if (!f)
			return;
		drm_rbln_bo_create c{};
		switch (below(5)) {
		case 0: c.size = 0; break;
		case 1: c.size = 1ULL << 62; break;
		case 2: c.size = 4096; c.flags = 4U << below(30); break;	// none of DRM_RBLN_BO_CREATE_FLAGS
		case 3: c.size = 4096; c.chiplet = 4 + static_cast<uint32_t>(below(100)); break;
		default: c.size = 4096; c.reserved = 1; break;
		}
		int err = call(f->fd, DRM_IOCTL_RBLN_BO_CREATE, &c);
		stats().record(Op::BoCreateInvalid, err);
		fail_if_accepted(!err, [&] {
			return fmt::format("BO_CREATE on {}: size {} flags {:#x} chiplet {} reserved {} (handle {})",
					   f->node, c.size, c.flags, c.chiplet, c.reserved, c.handle);
		});
		if (!err)	// kept, so that it is freed as any other
			f->bos.push_back({c.handle, c.size, c.chiplet, false});
	}

	void gem_close()
	{
		File *f = any_file();
		if (!f)
			return;
		drm_gem_close c{};
		c.handle = any_handle(*f);
		int err = call(f->fd, DRM_IOCTL_GEM_CLOSE, &c);
		stats().record(Op::GemClose, err);
		std::erase_if(f->bos, [&](const Bo &b) { return b.handle == c.handle; });
	}

	void bo_info()
	{
		File *f = any_file();
		if (!f)
			return;
		drm_rbln_bo_info info{};
		info.handle = any_handle(*f);
		info.flags = chance(5) ? 1 : 0;
		const uint32_t flags = info.flags;
		int err = call(f->fd, DRM_IOCTL_RBLN_BO_INFO, &info);
		stats().record(Op::BoInfo, err);
		if (flags)
			fail_if_accepted(!err, [&] {
				return fmt::format("BO_INFO on {}: handle {} flags {:#x}", f->node, info.handle, flags);
			});
	}

	// Maps a buffer, writes and reads it; a revoked buffer raises SIGBUS.
	void mmap_touch()
	{
		File *f = any_file();
		if (!f || f->bos.empty() || maps_.size() >= 16)
			return;
		drm_rbln_bo_info info{};
		info.handle = pick(f->bos).handle;
		int err = call(f->fd, DRM_IOCTL_RBLN_BO_INFO, &info);
		void *p = MAP_FAILED;
		if (!err) {
			p = ::mmap(nullptr, info.size, PROT_READ | PROT_WRITE, MAP_SHARED, f->fd,
				   static_cast<off_t>(info.mmap_offset));
			err = p == MAP_FAILED ? errno : 0;
		}
		stats().record(Op::Mmap, err);
		if (err)
			return;
		maps_.push_back({p, info.size});
		volatile char *bytes = static_cast<char *>(p);
		if (sigsetjmp(sigbus_jump, 1) == 0) {
			size_t at = below(info.size);
			bytes[at] = static_cast<char>(at);
			(void)bytes[below(info.size)];
		} else {
			stats().sigbus++;
		}
	}

	void munmap_one()
	{
		if (maps_.empty())
			return;
		size_t i = below(maps_.size());
		::munmap(maps_[i].addr, maps_[i].len);
		maps_.erase(maps_.begin() + static_cast<long>(i));
	}

	static bool on(const Bo &b, uint32_t chiplet)
	{
		return !b.host && (b.chiplet == chiplet || b.chiplet == DRM_RBLN_CHIPLET_INTERLEAVED);
	}

	// An on-chip engine of @chiplet (Neural DMA, Task DMA, Device HDMA: those
	// the device has there), or DRM_RBLN_ENGINE_COUNT if it has none.
	uint32_t on_chip_engine(const DeviceLimits &lim, uint32_t chiplet)
	{
		std::vector<uint32_t> kinds;
		for (uint32_t e : {DRM_RBLN_ENGINE_NEURAL_DMA, DRM_RBLN_ENGINE_TASK_DMA, DRM_RBLN_ENGINE_DEVICE_HDMA})
			if (lim.has(chiplet, e))
				kinds.push_back(e);
		return kinds.empty() ? static_cast<uint32_t>(DRM_RBLN_ENGINE_COUNT) : pick(kinds);
	}

	// A copy the driver should accept: External HDMA between a host buffer
	// and chiplet 0, or an on-chip engine between buffers of one chiplet,
	// within the device's limits (DeviceLimits: a PCI NPU's jobs are small,
	// one of a file's at a time).
	bool valid_job(File &f, drm_rbln_submit &s, std::vector<drm_rbln_copy> &copies)
	{
		if (f.seqnos.size() >= f.lim.max_pending())
			return false;
		const Bo &a = pick(f.bos);
		std::vector<const Bo *> peers;
		if (a.host) {
			s.engine = DRM_RBLN_ENGINE_EXTERNAL_HDMA;
			s.chiplet = 0;
			for (const Bo &b : f.bos)
				if (on(b, 0))
					peers.push_back(&b);
		} else {
			s.chiplet = a.chiplet == DRM_RBLN_CHIPLET_INTERLEAVED ? 0 : a.chiplet;
			s.engine = on_chip_engine(f.lim, s.chiplet);
			for (const Bo &b : f.bos)
				if (on(b, s.chiplet) && b.handle != a.handle)
					peers.push_back(&b);
		}
		if (peers.empty() || !f.lim.has(s.chiplet, s.engine))
			return false;
		copies.resize(1 + below(f.lim.max_copies()));
		uint64_t left = f.lim.job_bytes();
		for (size_t i = 0; i < copies.size(); i++) {
			drm_rbln_copy &c = copies[i];
			const Bo &b = *peers[below(peers.size())];
			bool to_a = chance(50);
			c.src_handle = to_a ? b.handle : a.handle;
			c.dst_handle = to_a ? a.handle : b.handle;
			c.size = 1 + below(std::min({a.size, b.size, left}));
			c.src_offset = below((to_a ? b.size : a.size) - c.size + 1);
			c.dst_offset = below((to_a ? a.size : b.size) - c.size + 1);
			left -= c.size;
			if (!left) {
				copies.resize(i + 1);
				break;
			}
		}
		return true;
	}

	void fill(drm_rbln_submit &s, std::vector<drm_rbln_copy> &copies)
	{
		s.copies = reinterpret_cast<uintptr_t>(copies.data());
		s.copy_count = static_cast<uint32_t>(copies.size());
		s.copy_size = sizeof(drm_rbln_copy);
		s.label = reinterpret_cast<uintptr_t>("storm");
	}

	// A file with a job the driver should accept in @s and @copies, or null.
	File *prepare_job(drm_rbln_submit &s, std::vector<drm_rbln_copy> &copies)
	{
		File *f = any_file();
		if (!f || f->bos.empty() || !valid_job(*f, s, copies))
			return nullptr;
		fill(s, copies);
		return f;
	}

	void submit()
	{
		drm_rbln_submit s{};
		std::vector<drm_rbln_copy> copies;
		File *f = prepare_job(s, copies);
		if (!f)
			return;
		int err = call(f->fd, DRM_IOCTL_RBLN_SUBMIT, &s);
		stats().record(Op::Submit, err);
		if (!err)
			f->seqnos.push_back(s.seqno);
		after(*f, err);
	}

	// A job the driver must refuse, whole, before anything runs.
	void submit_broken()
	{
		drm_rbln_submit s{};
		std::vector<drm_rbln_copy> copies;
		File *f = prepare_job(s, copies);
		if (!f)
			return;
		const char *why;
		switch (below(8)) {
		case 0: copies.back().size = 0; why = "last copy of 0 bytes"; break;
		case 1: copies.back().src_offset = ~0ULL - 10; why = "last copy's source offset wraps"; break;
		case 2:
			copies.back().dst_handle = 1000 + static_cast<uint32_t>(below(100));
			why = "last copy's destination handle made up";
			break;
		case 3: s.copy_count = 0; why = "no copies"; break;
		case 4: s.copies = 0x10; why = "copies unmapped"; break;	// EFAULT
		case 5: s.copy_size = 4; why = "copy_size too small"; break;
		case 6:
			s.engine = DRM_RBLN_ENGINE_COUNT + static_cast<uint32_t>(below(10));
			why = "no such engine";
			break;
		default: s.flags = 4U << below(30); why = "unknown flag"; break;	// not REPORT_END nor TIMES
		}
		int err = call(f->fd, DRM_IOCTL_RBLN_SUBMIT, &s);
		stats().record(Op::SubmitBroken, err);
		fail_if_accepted(!err, [&] {
			return fmt::format("SUBMIT on {} ({}): {}", f->node, why, describe(s, copies));
		});
		if (!err)
			f->seqnos.push_back(s.seqno);
	}

	// Up to four jobs of one file in one SUBMIT_BATCH, each waiting for the
	// one before it through a syncobj, sometimes one of them broken: the
	// batch stops there (the call fails only if it is the first).
	void submit_batch()
	{
		File *f = any_file();
		if (!f || f->bos.empty())
			return;
		std::array<drm_rbln_submit, 4> subs{};
		std::array<std::vector<drm_rbln_copy>, 4> copies;
		std::array<drm_rbln_sync, 4> waits{};
		std::array<uint32_t, 4> syncs{};
		size_t n = 0, links = 0;
		for (size_t want = 1 + below(f->lim.slow() ? 2 : 4); n < want && valid_job(*f, subs[n], copies[n]); n++)
			fill(subs[n], copies[n]);
		if (!n)
			return;
		for (; links + 1 < n; links++) {
			drm_syncobj_create c{};
			if (call(f->fd, DRM_IOCTL_SYNCOBJ_CREATE, &c))
				break;
			syncs[links] = c.handle;
			subs[links].out_sync.handle = c.handle;
			waits[links + 1] = {c.handle, 0, 0};
			subs[links + 1].in_syncs = reinterpret_cast<uintptr_t>(&waits[links + 1]);
			subs[links + 1].in_sync_count = 1;
		}
		const size_t bad = chance(20) ? below(n) : n;	// n: none
		const char *why = "";
		if (bad < n) {
			switch (below(3)) {
			case 0: copies[bad].back().size = 0; why = "last copy of 0 bytes"; break;
			case 1: subs[bad].engine = DRM_RBLN_ENGINE_COUNT; why = "no such engine"; break;
			default: subs[bad].reserved = 1; why = "reserved set"; break;
			}
		}
		for (drm_rbln_submit &s : subs)
			s.flags = chance(50) ? DRM_RBLN_SUBMIT_REPORT_END : 0;
		drm_rbln_submit_batch b{};
		b.submits = reinterpret_cast<uintptr_t>(subs.data());
		b.count = static_cast<uint32_t>(n);
		b.submit_size = sizeof(drm_rbln_submit);
		int err = call(f->fd, DRM_IOCTL_RBLN_SUBMIT_BATCH, &b);
		stats().record(Op::SubmitBatch, err ? err : -b.error);
		// The broken element must stop the batch: it and the ones after it stay out.
		if (bad < n)
			fail_if_accepted(!err && b.submitted > bad, [&] {
				return fmt::format("SUBMIT_BATCH on {} of {} elements: element {} is broken ({}) but "
						   "{} went in (error {}); element {}: {}", f->node, n, bad, why,
						   b.submitted, b.error, bad, describe(subs[bad], copies[bad]));
			});
		for (size_t k = 0; !err && k < b.submitted && k < n; k++)
			if (!subs[k].ended)
				f->seqnos.push_back(subs[k].seqno);
		if (!err && n > 1 && links + 1 == n && b.submitted == n) {
			const drm_rbln_submit &last = subs[n - 1];
			if (last.ended) {
				stats().record(Op::Chain, -last.status);
			} else {
				// Waited for now, or a kill or a revocation would often
				// come first; storm.sh cuts a job off after 200 ms (TDR).
				f->chain_ends.push_back(last.seqno);
				wait_for(*f, last.seqno, 2000000000);
			}
		}
		for (uint32_t h : syncs)
			if (h) {
				drm_syncobj_destroy d{};
				d.handle = h;
				call(f->fd, DRM_IOCTL_SYNCOBJ_DESTROY, &d);
			}
		after(*f, err);
	}

	void wait()
	{
		File *f = any_file();
		if (!f)
			return;
		wait_for(*f, f->seqnos.empty() || chance(5) ? below(1000) : pick(f->seqnos),
			 static_cast<int64_t>(below(20)) * 1000000);
	}

	void wait_for(File &f, uint64_t seqno, int64_t timeout_ns)
	{
		drm_rbln_wait w{};
		w.seqno = seqno;
		w.timeout_ns = timeout_ns;
		int err = call(f.fd, DRM_IOCTL_RBLN_WAIT, &w);
		stats().record(Op::Wait, err);
		if (err || !std::erase(f.seqnos, w.seqno))
			return;		// still running, or not a job it waits for
		stats().record(Op::JobEnd, -w.status);
		if (!f.lim.simulated)
			stats().record(Op::PciJobEnd, -w.status);
		if (std::erase(f.chain_ends, w.seqno))
			stats().record(Op::Chain, -w.status);
		if (std::erase(f.timeline_ends, w.seqno))
			stats().record(Op::TimelineChain, -w.status);
	}

	// The biggest job the driver allows (DRM_RBLN_PARAM_JOB_MAX_BYTES) on
	// Neural DMA of chiplet 0, as 4 MiB copies (one copy of the limit where
	// it is smaller, as on a PCI NPU) between two lazy buffers made for it
	// (their handles go at once, the job keeps them); one byte more is
	// refused.  Waited for now and then, so that a kill often finds it running.
	void huge_job()
	{
		File *f = any_file();
		if (!f || f->seqnos.size() >= f->lim.max_pending())
			return;
		drm_rbln_get_param p{};
		p.param = DRM_RBLN_PARAM_JOB_MAX_BYTES;
		if (call(f->fd, DRM_IOCTL_RBLN_GET_PARAM, &p) || !p.value)
			return;
		const uint64_t piece = std::min<uint64_t>(4ULL << 20, p.value);
		if (p.value % piece)
			return;
		std::array<uint32_t, 2> h{};
		for (uint32_t &handle : h) {
			drm_rbln_bo_create c{};
			c.size = piece;
			if (call(f->fd, DRM_IOCTL_RBLN_BO_CREATE, &c))
				break;
			handle = c.handle;
		}
		if (h[0] && h[1]) {
			std::vector<drm_rbln_copy> copies(p.value / piece,
							  drm_rbln_copy{h[0], h[1], 0, 0, piece});
			drm_rbln_submit s{};
			s.engine = DRM_RBLN_ENGINE_NEURAL_DMA;
			copies.push_back({h[0], h[1], 0, 0, 1});
			fill(s, copies);
			int over = call(f->fd, DRM_IOCTL_RBLN_SUBMIT, &s);
			fail_if_accepted(!over, [&] {
				return fmt::format("SUBMIT on {} of {} bytes, one over the job limit",
						   f->node, p.value + 1);
			});
			if (!over)
				f->seqnos.push_back(s.seqno);
			copies.pop_back();
			fill(s, copies);
			int err = call(f->fd, DRM_IOCTL_RBLN_SUBMIT, &s);
			stats().record(Op::HugeJob, err);
			if (!err && !s.ended) {
				f->seqnos.push_back(s.seqno);
				if (chance(30))
					wait_for(*f, s.seqno, 2000000000);
			}
		}
		for (uint32_t handle : h)
			if (handle) {
				drm_gem_close c{};
				c.handle = handle;
				call(f->fd, DRM_IOCTL_GEM_CLOSE, &c);
			}
		after(*f, 0);
	}

	// Job A signals point 1 of a new timeline syncobj, job B waits for it
	// (on another engine, or the same); B's end is counted as the pair's.
	void timeline_chain()
	{
		drm_rbln_submit a{}, b{};
		std::vector<drm_rbln_copy> ca, cb;
		File *f = prepare_job(a, ca);
		if (!f || !valid_job(*f, b, cb))
			return;
		fill(b, cb);
		drm_syncobj_create c{};
		if (call(f->fd, DRM_IOCTL_SYNCOBJ_CREATE, &c))
			return;
		drm_rbln_sync wait{c.handle, 0, 1};
		a.out_sync = {c.handle, 0, 1};
		b.in_syncs = reinterpret_cast<uintptr_t>(&wait);
		b.in_sync_count = 1;
		int err = call(f->fd, DRM_IOCTL_RBLN_SUBMIT, &a);
		if (!err && !a.ended)
			f->seqnos.push_back(a.seqno);
		if (!err)
			err = call(f->fd, DRM_IOCTL_RBLN_SUBMIT, &b);
		if (!err && b.ended) {
			stats().record(Op::TimelineChain, -b.status);
		} else if (!err) {
			f->seqnos.push_back(b.seqno);
			f->timeline_ends.push_back(b.seqno);
			wait_for(*f, b.seqno, 2000000000);
		}
		drm_syncobj_destroy d{};
		d.handle = c.handle;
		call(f->fd, DRM_IOCTL_SYNCOBJ_DESTROY, &d);
		after(*f, err);
	}

	// Exports a buffer and imports it into another open file (maybe another
	// device): both then hold it.
	void prime()
	{
		File *f = any_file();
		if (!f || f->bos.empty())
			return;
		const Bo bo = pick(f->bos);
		drm_prime_handle ex{};
		ex.handle = bo.handle;
		ex.flags = DRM_CLOEXEC | DRM_RDWR;
		int err = call(f->fd, DRM_IOCTL_PRIME_HANDLE_TO_FD, &ex);
		stats().record(Op::PrimeExport, err);
		if (err)
			return;
		File &to = pick(files_);
		drm_prime_handle im{};
		im.fd = ex.fd;
		err = call(to.fd, DRM_IOCTL_PRIME_FD_TO_HANDLE, &im);
		stats().record(Op::PrimeImport, err);
		if (!err && std::none_of(to.bos.begin(), to.bos.end(), [&](const Bo &b) { return b.handle == im.handle; }))
			to.bos.push_back({im.handle, bo.size, bo.chiplet, bo.host});
		if (chance(70))
			::close(ex.fd);
	}

	void acquire_release()
	{
		File *f = any_file();
		if (!f)
			return;
		drm_rbln_acquire a{};
		if (chance(5))
			a.flags = 2;
		int err = call(f->fd, DRM_IOCTL_RBLN_ACQUIRE, &a);
		stats().record(Op::Acquire, err);
		if (a.flags)
			fail_if_accepted(!err, [&] { return fmt::format("ACQUIRE on {}: flags {:#x}", f->node, a.flags); });
		// Held only for a moment, or the other workers get nothing done.
		if (!err && chance(90))
			stats().record(Op::Release, call(f->fd, DRM_IOCTL_RBLN_RELEASE, &a));
	}

	// Odd counts and element sizes; returns what it saw for reclaim().
	std::vector<drm_rbln_client> list_clients()
	{
		File *f = any_file();
		std::vector<drm_rbln_client> seen;
		if (!f)
			return seen;
		const uint32_t sizes[] = {sizeof(drm_rbln_client), sizeof(drm_rbln_client) + 8, 8, 4096, 5000};
		uint32_t entry = sizes[below(5)];
		uint32_t count = static_cast<uint32_t>(below(8));
		std::vector<char> room(static_cast<size_t>(entry) * count + 1);
		drm_rbln_list_clients l{};
		l.count = count;
		l.entry_size = entry;
		l.entries = chance(5) ? 0x10 : reinterpret_cast<uintptr_t>(room.data());
		int err = call(f->fd, DRM_IOCTL_RBLN_LIST_CLIENTS, &l);
		stats().record(Op::ListClients, err);
		// A bad pointer with room fails on this file's own entry, which is always there.
		if (entry < sizeof(drm_rbln_client) || entry > 4096 || (l.entries == 0x10 && count))
			fail_if_accepted(!err, [&] {
				return fmt::format("LIST_CLIENTS on {}: count {} entry_size {} entries {:#x}", f->node,
						   count, entry, l.entries);
			});
		if (!err && entry >= sizeof(drm_rbln_client) && l.entries != 0x10)
			for (uint32_t i = 0; i < std::min(count, l.count); i++) {
				drm_rbln_client c;
				std::memcpy(&c, room.data() + static_cast<size_t>(i) * entry, sizeof(c));
				seen.push_back(c);
			}
		return seen;
	}

	void reclaim()
	{
		auto clients = list_clients();
		File *f = any_file();
		if (!f)
			return;
		drm_rbln_reclaim r{};
		r.client_id = clients.empty() ? below(1000) : pick(clients).client_id;
		r.flags = chance(20) ? DRM_RBLN_RECLAIM_FORCE : 0;
		stats().record(Op::Reclaim, call(f->fd, DRM_IOCTL_RBLN_RECLAIM, &r));
	}

	void reset()
	{
		File *f = any_file();
		if (!f)
			return;
		drm_rbln_reset r{};
		r.flags = chance(30) ? DRM_RBLN_RESET_FORCE : 0;
		stats().record(Op::Reset, call(f->fd, DRM_IOCTL_RBLN_RESET, &r));
	}

	void query()
	{
		File *f = any_file();
		if (!f)
			return;
		int err;
		switch (below(4)) {
		case 0: {
			drm_rbln_get_param p{};
			p.param = static_cast<uint32_t>(below(16));
			p.flags = chance(30) ? DRM_RBLN_GET_PARAM_CHIPLET : 0;
			p.chiplet = static_cast<uint32_t>(below(5));
			err = call(f->fd, DRM_IOCTL_RBLN_GET_PARAM, &p);
			break;
		}
		case 1: {
			drm_rbln_device_info i{};
			const uint32_t flags = chance(5) ? 1 : 0;
			i.flags = flags;
			err = call(f->fd, DRM_IOCTL_RBLN_DEVICE_INFO, &i);
			if (flags)
				fail_if_accepted(!err, [&] {
					return fmt::format("DEVICE_INFO on {}: flags {:#x}", f->node, flags);
				});
			break;
		}
		case 2: {
			drm_rbln_device_status s{};
			err = call(f->fd, DRM_IOCTL_RBLN_DEVICE_STATUS, &s);
			break;
		}
		default: {
			drm_rbln_client_usage u{};
			err = call(f->fd, DRM_IOCTL_RBLN_CLIENT_USAGE, &u);
			break;
		}
		}
		stats().record(Op::Query, err);
	}

	// A child inherits every open file and mapping and keeps going for a
	// while after this worker is gone (killed or finished).
	void fork_child()
	{
		if (!chance(20))
			return;
		pid_t pid = ::fork();
		stats().record(Op::ForkChild, pid < 0 ? errno : 0);
		if (pid != 0)
			return;
		opts_.deadline = std::min(opts_.deadline, std::chrono::steady_clock::now() +
				std::chrono::milliseconds(200 + below(1500)));
		rng_.seed(rng_() ^ static_cast<uint64_t>(::getpid()));
		run();
	}

	WorkerOptions opts_;
	std::mt19937_64 rng_;
	std::vector<File> files_;
	std::vector<Mapping> maps_;
};

}  // namespace

void run_worker(const WorkerOptions &opts)
{
	struct sigaction sa{};
	sa.sa_handler = on_sigbus;
	::sigaction(SIGBUS, &sa, nullptr);
	// The allocation-failure injection is scoped to the tasks that ask for it.
	if (opts.fail_allocations) {
		int fd = ::open("/proc/self/make-it-fail", O_WRONLY | O_CLOEXEC);
		if (fd >= 0) {
			(void)!::write(fd, "1", 1);
			::close(fd);
		}
	}
	Worker(opts).run();
}

}  // namespace storm
