// Errors along every dependency, against the real module: a job whose input
// failed (an injected -EIO, or its engine hung until the timeout) fails with
// the input's error, whatever joins them (binary syncobj, timeline point,
// imported sync_file) and wherever the input ran (the same engine of the same
// or another file, another engine, chiplet or device), whether the dependant
// ends inside SUBMIT (its input ended before) or on the scheduler.
#include <cstring>
#include <string>
#include <tuple>
#include <vector>

#include <sys/ioctl.h>

#include <gtest/gtest.h>

#include "rbln_test_util.h"

using namespace rbln::test;

namespace {

constexpr uint64_t kBuffer = 128 << 10;	// each buffer, and the bytes of each job
constexpr uint32_t kInputChiplet = 1;	// the input runs on the Rebel100's chiplet 1, Neural DMA

enum class Via { binary, timeline, sync_file };
enum class Where { same_engine, same_engine_other_file, other_engine, other_chiplet, other_device };
enum class Cause { injected, timeout };
enum class Path { direct, scheduled };

struct Kind {
	const char *name;
	Via via;
	Where where;
};

const Kind kKinds[] = {
	{"BinarySameEngine", Via::binary, Where::same_engine},
	{"BinarySameEngineOtherFile", Via::binary, Where::same_engine_other_file},
	{"BinaryOtherEngine", Via::binary, Where::other_engine},
	{"BinaryOtherChiplet", Via::binary, Where::other_chiplet},
	{"BinaryOtherDevice", Via::binary, Where::other_device},
	{"TimelineSameEngine", Via::timeline, Where::same_engine},
	{"TimelineOtherEngine", Via::timeline, Where::other_engine},
	{"TimelineOtherDevice", Via::timeline, Where::other_device},
	{"SyncFileOtherEngine", Via::sync_file, Where::other_engine},
	{"SyncFileOtherDevice", Via::sync_file, Where::other_device},
};

// Where a job runs, with two buffers of its chiplet to copy between.
struct Place {
	int fd;
	unsigned npu;
	uint32_t engine, chiplet;
	uint32_t src = 0, dst = 0;
};

struct Submitted {
	int error = 0;		// of the ioctl
	uint64_t seqno = 0;
	bool ended = false;
	int status = 0;		// with ended
};

// A job on @p that may end inside SUBMIT (Path::direct) or has to go to its
// engine's scheduler (the simulator's no_direct, around the SUBMIT only).
Submitted submit_job(const Place &p, Path path, const drm_rbln_sync *in, drm_rbln_sync out,
		     uint32_t flags)
{
	const std::vector<drm_rbln_copy> copies{{p.src, p.dst, 0, 0, kBuffer}};
	ScheduledJobs scheduled(p.npu, path == Path::scheduled);
	EXPECT_EQ(scheduled.error(), 0) << "no_direct";
	drm_rbln_submit s{};
	s.engine = p.engine;
	s.chiplet = p.chiplet;
	s.copies = reinterpret_cast<uintptr_t>(copies.data());
	s.copy_count = uint32_t(copies.size());
	s.copy_size = sizeof(drm_rbln_copy);
	s.flags = flags;
	s.in_syncs = reinterpret_cast<uintptr_t>(in);
	s.in_sync_count = in ? 1 : 0;
	s.out_sync = out;
	Submitted r;
	if (ioctl(p.fd, DRM_IOCTL_RBLN_SUBMIT, &s))
		r.error = errno;
	r.seqno = s.seqno;
	r.ended = s.ended;
	r.status = s.status;
	return r;
}

// @handle of @from in the file @to: the same syncobj (Via::binary, timeline)
// or a new one holding its fence as a sync_file would carry it.  0 on failure.
uint32_t link(int from, uint32_t handle, int to, Via via)
{
	if (from == to && via != Via::sync_file)
		return handle;
	drm_syncobj_handle out{};
	out.handle = handle;
	if (via == Via::sync_file)
		out.flags = DRM_SYNCOBJ_HANDLE_TO_FD_FLAGS_EXPORT_SYNC_FILE;
	if (ioctl(from, DRM_IOCTL_SYNCOBJ_HANDLE_TO_FD, &out))
		return 0;
	Fd shared(out.fd);
	drm_syncobj_handle in{};
	in.fd = shared.get();
	if (via == Via::sync_file) {
		in.handle = syncobj_create(to);
		in.flags = DRM_SYNCOBJ_FD_TO_HANDLE_FLAGS_IMPORT_SYNC_FILE;
	}
	return ioctl(to, DRM_IOCTL_SYNCOBJ_FD_TO_HANDLE, &in) ? 0 : in.handle;
}

uint64_t memory_used(int fd)
{
	uint64_t v = 0;
	EXPECT_EQ(get_param(fd, DRM_RBLN_PARAM_MEMORY_USED, &v), 0);
	return v;
}

class Deps : public ::testing::TestWithParam<std::tuple<Kind, Path, Cause>> {
protected:
	void SetUp() override
	{
		rebel_ = open_node(sim_device(1)->node);
		other_file_ = open_node(sim_device(1)->node);
		atom_ = open_node(sim_device(0)->node);
		ASSERT_TRUE(rebel_ && other_file_ && atom_);
		used_rebel_ = memory_used(rebel_.get());
		used_atom_ = memory_used(atom_.get());
	}
	void TearDown() override
	{
		EXPECT_EQ(debugfs_write(1, "hang", std::to_string(kInputChiplet) + " neural_dma 0"), 0);
		EXPECT_EQ(debugfs_write(1, "fail_next_jobs", "0"), 0);
		for (auto &[fd, handle] : bos_)
			EXPECT_EQ(gem_close(fd, handle), 0);
		bos_.clear();
		EXPECT_EQ(memory_used(rebel_.get()), used_rebel_) << "memory leaked";
		EXPECT_EQ(memory_used(atom_.get()), used_atom_) << "memory leaked";
	}
	Place place(int fd, unsigned npu, uint32_t engine, uint32_t chiplet)
	{
		Place p{fd, npu, engine, chiplet};
		for (uint32_t *h : {&p.src, &p.dst}) {
			EXPECT_EQ(bo_create(fd, kBuffer, 0, chiplet, h), 0);
			bos_.emplace_back(fd, *h);
		}
		return p;
	}
	Place dependant(Where where)
	{
		switch (where) {
		case Where::same_engine:
			return place(rebel_.get(), 1, DRM_RBLN_ENGINE_NEURAL_DMA, kInputChiplet);
		case Where::same_engine_other_file:
			return place(other_file_.get(), 1, DRM_RBLN_ENGINE_NEURAL_DMA, kInputChiplet);
		case Where::other_engine:
			return place(rebel_.get(), 1, DRM_RBLN_ENGINE_TASK_DMA, kInputChiplet);
		case Where::other_chiplet:
			return place(rebel_.get(), 1, DRM_RBLN_ENGINE_NEURAL_DMA, kInputChiplet + 1);
		case Where::other_device:
			return place(atom_.get(), 0, DRM_RBLN_ENGINE_NEURAL_DMA, 0);
		}
		return {};
	}
	Fd rebel_, other_file_, atom_;
	uint64_t used_rebel_ = 0, used_atom_ = 0;
	std::vector<std::pair<int, uint32_t>> bos_;
};

TEST_P(Deps, DependantFailsWithItsInputsError)
{
	const auto &[kind, path, cause] = GetParam();
	Place input = place(rebel_.get(), 1, DRM_RBLN_ENGINE_NEURAL_DMA, kInputChiplet);
	Place dep = dependant(kind.where);
	const uint64_t point = kind.via == Via::timeline ? 1 : 0;
	const uint32_t out = syncobj_create(input.fd);
	ASSERT_NE(out, 0u);

	JobTimeout timeout("300");
	ASSERT_EQ(timeout.error(), 0);
	const int expected = cause == Cause::injected ? -EIO : -ETIMEDOUT;
	const std::string input_engine = std::to_string(kInputChiplet) + " neural_dma";
	if (cause == Cause::injected) {
		ASSERT_EQ(debugfs_write(1, "fail_next_jobs", "1"), 0);
	}
	// A scheduled dependant's input has not ended at its SUBMIT (one that had
	// failed would fail it right there): the input's engine holds it until then.
	const bool hold_input = cause == Cause::timeout || path == Path::scheduled;
	if (hold_input) {
		ASSERT_EQ(debugfs_write(1, "hang", input_engine), 0);
	}

	Submitted a = submit_job(input, Path::scheduled, nullptr, {out, 0, point}, 0);
	ASSERT_EQ(a.error, 0) << strerror(a.error);
	int a_status = 1;
	if (path == Path::direct)	// the input has ended before the dependant comes
		a_status = wait_job(input.fd, a.seqno);

	const uint32_t in_handle = link(input.fd, out, dep.fd, kind.via);
	ASSERT_NE(in_handle, 0u) << strerror(errno);
	const drm_rbln_sync in{in_handle, 0, kind.via == Via::sync_file ? 0 : point};
	Submitted b = submit_job(dep, path, &in, {}, DRM_RBLN_SUBMIT_REPORT_END);
	if (hold_input && cause == Cause::injected) {	// the input runs now, and fails
		EXPECT_EQ(debugfs_write(1, "hang", input_engine + " 0"), 0);
	}
	ASSERT_EQ(b.error, 0) << strerror(b.error);
	if (path == Path::scheduled)
		a_status = wait_job(input.fd, a.seqno);
	EXPECT_EQ(a_status, expected) << "the input's own status";

	if (path == Path::direct)
		EXPECT_TRUE(b.ended) << "a dependant whose inputs ended takes the direct path";
	else
		EXPECT_FALSE(b.ended);
	const int b_status = b.ended ? b.status : wait_job(dep.fd, b.seqno);
	EXPECT_EQ(b_status, a_status) << "the dependant fails with its input's error";

	if (in_handle != out) {
		EXPECT_EQ(syncobj_destroy(dep.fd, in_handle), 0);
	}
	EXPECT_EQ(syncobj_destroy(input.fd, out), 0);
}

std::string case_name(const ::testing::TestParamInfo<Deps::ParamType> &info)
{
	const auto &[kind, path, cause] = info.param;
	return std::string(kind.name) + (path == Path::direct ? "Direct" : "Scheduled") +
	       (cause == Cause::injected ? "Injected" : "Timeout");
}

INSTANTIATE_TEST_SUITE_P(EveryKind, Deps,
			 ::testing::Combine(::testing::ValuesIn(kKinds),
					    ::testing::Values(Path::direct, Path::scheduled),
					    ::testing::Values(Cause::injected, Cause::timeout)),
			 case_name);

} // namespace
