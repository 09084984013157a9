// Device times of a file's own jobs (interface 14: SUBMIT_TIMES, JOB_TIMES)
// against the real module: each asked-for job comes back once, in
// CLOCK_MONOTONIC, submit <= start <= end, on its engine; other jobs and other
// files' jobs never; a hung job is marked; bad arguments are refused.
#include <algorithm>
#include <cstddef>
#include <cstring>
#include <ctime>
#include <map>
#include <optional>
#include <vector>

#include <sys/ioctl.h>
#include <unistd.h>

#include <gtest/gtest.h>

#include "rbln_test_util.h"

using namespace rbln::test;

namespace {

uint64_t monotonic_ns()
{
	timespec ts{};
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return uint64_t(ts.tv_sec) * 1'000'000'000ull + uint64_t(ts.tv_nsec);
}

// A SUBMIT of the one copy @c (kept alive by the caller) on @engine of @chiplet.
drm_rbln_submit one_copy(const drm_rbln_copy &c, uint32_t engine, uint32_t chiplet, uint32_t flags)
{
	drm_rbln_submit args{};
	args.engine = engine;
	args.chiplet = chiplet;
	args.copies = reinterpret_cast<uintptr_t>(&c);
	args.copy_count = 1;
	args.copy_size = sizeof(c);
	args.flags = flags;
	return args;
}

int submit_flags(int fd, uint32_t engine, uint32_t chiplet, drm_rbln_copy c, uint32_t flags,
		 uint64_t *seqno)
{
	drm_rbln_submit args = one_copy(c, engine, chiplet, flags);
	if (::ioctl(fd, DRM_IOCTL_RBLN_SUBMIT, &args))
		return errno;
	*seqno = args.seqno;
	return 0;
}

// A job that ran and succeeded between @t0 and @t1, by its device times.
void expect_ran_within(const drm_rbln_job_time &r, uint64_t t0, uint64_t t1)
{
	EXPECT_EQ(r.status, 0);
	EXPECT_EQ(r.flags, uint32_t{DRM_RBLN_JOB_TIME_RAN});
	EXPECT_LE(t0, r.submit_ns) << "CLOCK_MONOTONIC";
	EXPECT_LE(r.submit_ns, r.start_ns);
	EXPECT_LT(r.start_ns, r.end_ns) << "it ran for some time";
	EXPECT_LE(r.end_ns, t1);
}

// JOB_TIMES: 0 or errno; @out gets what was written.
int job_times(int fd, std::vector<drm_rbln_job_time> &out, uint32_t room, drm_rbln_job_times *ret = nullptr)
{
	out.assign(room, drm_rbln_job_time{});
	drm_rbln_job_times args{};
	args.entries = reinterpret_cast<uintptr_t>(out.data());
	args.count = room;
	args.entry_size = sizeof(drm_rbln_job_time);
	int err = ::ioctl(fd, DRM_IOCTL_RBLN_JOB_TIMES, &args) ? errno : 0;
	out.resize(args.count);
	if (ret)
		*ret = args;
	return err;
}

class JobTimes : public ::testing::Test {
protected:
	void SetUp() override
	{
		fd_ = open_node(sim_device(1)->node);	// the Rebel100
		ASSERT_TRUE(fd_);
		uint64_t v = 0;
		ASSERT_EQ(get_param(fd_.get(), DRM_RBLN_PARAM_UAPI_VERSION, &v), 0);
		ASSERT_GE(v, 14u);
	}
	uint32_t bo(uint64_t size, uint32_t flags, uint32_t chiplet)
	{
		uint32_t h = 0;
		EXPECT_EQ(bo_create(fd_.get(), size, flags, chiplet, &h), 0);
		handles_.push_back(h);
		return h;
	}
	void TearDown() override
	{
		for (uint32_t h : handles_)
			EXPECT_EQ(gem_close(fd_.get(), h), 0);
	}
	Fd fd_;
	std::vector<uint32_t> handles_;
};

} // namespace

TEST_F(JobTimes, EachAskedJobOnceWithinItsSubmitAndEnd)
{
	const int fd = fd_.get();
	// Even rounds' 4 KiB jobs may run inside SUBMIT; odd rounds' 1 MiB ones are
	// all scheduled (the simulator's no_direct).
	const uint64_t big = 1 << 20;
	const uint32_t host = bo(big, DRM_RBLN_BO_HOST, 0);
	const uint32_t c0 = bo(big, 0, 0), c2a = bo(big, 0, 2), c2b = bo(big, 0, 2);
	struct Want {
		uint32_t engine, chiplet;
	};
	std::map<uint64_t, Want> asked;
	std::vector<uint64_t> unasked;
	const uint64_t t0 = monotonic_ns();
	for (int round = 0; round < 4; round++) {
		uint64_t s = 0;
		const uint64_t len = round % 2 ? big : 4096;
		ScheduledJobs only(1, round % 2);
		ASSERT_EQ(only.error(), 0) << "no_direct";
		ASSERT_EQ(submit_flags(fd, DRM_RBLN_ENGINE_EXTERNAL_HDMA, 0, {host, c0, 0, 0, len},
				       DRM_RBLN_SUBMIT_TIMES, &s), 0);
		asked[s] = {DRM_RBLN_ENGINE_EXTERNAL_HDMA, 0};
		ASSERT_EQ(submit_flags(fd, DRM_RBLN_ENGINE_NEURAL_DMA, 2, {c2a, c2b, 0, 0, len},
				       DRM_RBLN_SUBMIT_TIMES | DRM_RBLN_SUBMIT_REPORT_END, &s), 0);
		asked[s] = {DRM_RBLN_ENGINE_NEURAL_DMA, 2};
		ASSERT_EQ(submit_flags(fd, DRM_RBLN_ENGINE_TASK_DMA, 0, {c0, c2a, 0, 0, len}, 0, &s), 0);
		unasked.push_back(s);
	}
	for (const auto &[s, w] : asked)
		ASSERT_EQ(wait_job(fd, s), 0);
	for (uint64_t s : unasked)
		ASSERT_EQ(wait_job(fd, s), 0);
	const uint64_t t1 = monotonic_ns();

	// Another file asks: it has none of them.
	Fd other = open_node(sim_device(1)->node);
	std::vector<drm_rbln_job_time> got;
	ASSERT_EQ(job_times(other.get(), got, 64), 0);
	EXPECT_TRUE(got.empty()) << "another file's jobs";

	drm_rbln_job_times args{};
	ASSERT_EQ(job_times(fd, got, 64, &args), 0);
	EXPECT_EQ(args.lost, 0u);
	EXPECT_EQ(args.pending, 0u);
	ASSERT_EQ(got.size(), asked.size()) << "every asked job once, no other";
	// Recorded about in end order, not exactly (the UAPI says so): sort, then
	// no two jobs of one engine may overlap.
	std::ranges::sort(got, {}, &drm_rbln_job_time::start_ns);
	std::map<uint32_t, uint64_t> last_end;
	for (const auto &r : got) {
		ASSERT_TRUE(asked.contains(r.seqno)) << "seqno " << r.seqno << " was not asked for";
		EXPECT_EQ(r.engine, asked[r.seqno].engine);
		EXPECT_EQ(r.chiplet, asked[r.seqno].chiplet);
		asked.erase(r.seqno);
		expect_ran_within(r, t0, t1);
		const uint32_t key = r.chiplet * 8 + r.engine;
		EXPECT_LE(last_end[key], r.start_ns) << "jobs of one engine overlap";
		last_end[key] = r.end_ns;
	}
	EXPECT_TRUE(asked.empty());
	ASSERT_EQ(job_times(fd, got, 64), 0);
	EXPECT_TRUE(got.empty()) << "records are taken once";
}

TEST_F(JobTimes, SmallRoomLeavesTheRestPendingAndABiggerEntryIsZeroed)
{
	const int fd = fd_.get();
	const uint32_t a = bo(8192, 0, 1), b = bo(8192, 0, 1);
	std::vector<uint64_t> seqnos;
	for (int i = 0; i < 5; i++) {
		uint64_t s = 0;
		ASSERT_EQ(submit_flags(fd, DRM_RBLN_ENGINE_DEVICE_HDMA, 1, {a, b, 0, 0, 4096},
				       DRM_RBLN_SUBMIT_TIMES, &s), 0);
		ASSERT_EQ(wait_job(fd, s), 0);
		seqnos.push_back(s);
	}
	std::vector<drm_rbln_job_time> got;
	drm_rbln_job_times args{};
	ASSERT_EQ(job_times(fd, got, 2, &args), 0);
	ASSERT_EQ(got.size(), 2u);
	EXPECT_EQ(args.pending, 3u);
	EXPECT_EQ(got[0].seqno, seqnos[0]) << "oldest first";
	EXPECT_EQ(got[1].seqno, seqnos[1]);

	// An element of a newer caller, 16 bytes longer: the tail is zeroed.
	struct Longer {
		drm_rbln_job_time t;
		uint64_t more[2];
	};
	std::vector<Longer> big(4);
	for (auto &e : big)
		e.more[0] = e.more[1] = ~0ull;
	drm_rbln_job_times req{};
	req.entries = reinterpret_cast<uintptr_t>(big.data());
	req.count = 4;
	req.entry_size = sizeof(Longer);
	ASSERT_EQ(::ioctl(fd, DRM_IOCTL_RBLN_JOB_TIMES, &req), 0);
	ASSERT_EQ(req.count, 3u);
	for (uint32_t i = 0; i < 3; i++) {
		EXPECT_EQ(big[i].t.seqno, seqnos[2 + i]);
		EXPECT_EQ(big[i].more[0], 0u);
		EXPECT_EQ(big[i].more[1], 0u);
	}
	EXPECT_EQ(big[3].more[0], ~0ull) << "beyond .count nothing is written";
}

TEST_F(JobTimes, BadArgumentsAreRefused)
{
	const int fd = fd_.get();
	drm_rbln_job_time one{};
	auto call = [&](auto edit) {
		drm_rbln_job_times a{};
		a.entries = reinterpret_cast<uintptr_t>(&one);
		a.count = 1;
		a.entry_size = sizeof(one);
		edit(a);
		return ::ioctl(fd, DRM_IOCTL_RBLN_JOB_TIMES, &a) ? errno : 0;
	};
	EXPECT_EQ(call([](auto &) {}), 0);
	EXPECT_EQ(call([](auto &a) { a.flags = 1; }), EINVAL);
	EXPECT_EQ(call([](auto &a) { a.reserved = 1; }), EINVAL);
	EXPECT_EQ(call([](auto &a) { a.entry_size = sizeof(one) - 8; }), EINVAL);
	EXPECT_EQ(call([](auto &a) { a.entry_size = 4104; }), EINVAL);

	// An unknown SUBMIT flag is still refused; SUBMIT_TIMES is known.
	const uint32_t x = bo(8192, 0, 0), y = bo(8192, 0, 0);
	uint64_t s = 0;
	EXPECT_EQ(submit_flags(fd, DRM_RBLN_ENGINE_TASK_DMA, 0, {x, y, 0, 0, 4096}, 1u << 3, &s), EINVAL);
	ASSERT_EQ(submit_flags(fd, DRM_RBLN_ENGINE_TASK_DMA, 0, {x, y, 0, 0, 4096}, DRM_RBLN_SUBMIT_TIMES, &s), 0);
	ASSERT_EQ(wait_job(fd, s), 0);
	// A bad pointer: -EFAULT, and the record stays for a good call.
	drm_rbln_job_times bad{};
	bad.entries = 8;
	bad.count = 1;
	bad.entry_size = sizeof(one);
	EXPECT_EQ(::ioctl(fd, DRM_IOCTL_RBLN_JOB_TIMES, &bad) ? errno : 0, EFAULT);
	std::vector<drm_rbln_job_time> got;
	ASSERT_EQ(job_times(fd, got, 4), 0);
	ASSERT_EQ(got.size(), 1u);
	EXPECT_EQ(got[0].seqno, s);
}

TEST_F(JobTimes, AHungJobIsMarkedTimedOutAndItsDependantDidNotRun)
{
	const int fd = fd_.get();
	const uint32_t a = bo(8192, 0, 0), b = bo(8192, 0, 0);
	const uint32_t sync = syncobj_create(fd);
	ASSERT_NE(sync, 0u);
	std::optional<JobTimeout> timeout{"300"};
	ASSERT_EQ(debugfs_write(1, "hang", "0 task_dma"), 0);
	drm_rbln_copy c{a, b, 0, 0, 4096};
	drm_rbln_submit hung{};
	hung.engine = DRM_RBLN_ENGINE_TASK_DMA;
	hung.copies = reinterpret_cast<uintptr_t>(&c);
	hung.copy_count = 1;
	hung.copy_size = sizeof(c);
	hung.flags = DRM_RBLN_SUBMIT_TIMES;
	hung.out_sync.handle = sync;
	ASSERT_EQ(::ioctl(fd, DRM_IOCTL_RBLN_SUBMIT, &hung), 0);
	drm_rbln_copy c2{a, b, 4096, 4096, 4096};
	drm_rbln_sync in{sync, 0, 0};
	drm_rbln_submit dep{};
	dep.engine = DRM_RBLN_ENGINE_NEURAL_DMA;
	dep.copies = reinterpret_cast<uintptr_t>(&c2);
	dep.copy_count = 1;
	dep.copy_size = sizeof(c2);
	dep.flags = DRM_RBLN_SUBMIT_TIMES;
	dep.in_syncs = reinterpret_cast<uintptr_t>(&in);
	dep.in_sync_count = 1;
	ASSERT_EQ(::ioctl(fd, DRM_IOCTL_RBLN_SUBMIT, &dep), 0);
	EXPECT_EQ(wait_job(fd, hung.seqno), -ETIMEDOUT);
	EXPECT_EQ(wait_job(fd, dep.seqno), -ETIMEDOUT) << "its input's error";
	timeout.reset();
	EXPECT_EQ(syncobj_destroy(fd, sync), 0);

	std::vector<drm_rbln_job_time> got;
	ASSERT_EQ(job_times(fd, got, 8), 0);
	ASSERT_EQ(got.size(), 2u);
	const auto &h = got[0].seqno == hung.seqno ? got[0] : got[1];
	const auto &d = got[0].seqno == hung.seqno ? got[1] : got[0];
	EXPECT_EQ(h.status, -ETIMEDOUT);
	EXPECT_EQ(h.flags, uint32_t{DRM_RBLN_JOB_TIME_RAN | DRM_RBLN_JOB_TIME_TIMED_OUT});
	EXPECT_GE(h.end_ns - h.start_ns, 250'000'000ull) << "it ran until about the timeout (the scheduler arms its timer just before run_job, to a jiffy)";
	EXPECT_EQ(d.status, -ETIMEDOUT);
	EXPECT_EQ(d.flags, 0u) << "it never ran";
	EXPECT_EQ(d.start_ns, d.end_ns);
	EXPECT_GE(d.end_ns, h.end_ns) << "it ended once its input had";
}

TEST_F(JobTimes, AFullRingCountsWhatItDropped)
{
	const int fd = fd_.get();
	const uint32_t a = bo(8192, 0, 3), b = bo(8192, 0, 3);
	const unsigned extra = 5;
	for (unsigned i = 0; i < DRM_RBLN_JOB_TIMES_RING + extra; i++) {
		uint64_t s = 0;
		ASSERT_EQ(submit_flags(fd, DRM_RBLN_ENGINE_NEURAL_DMA, 3, {a, b, 0, 0, 64},
				       DRM_RBLN_SUBMIT_TIMES, &s), 0);
		if (i % 128 == 127) {
			ASSERT_EQ(wait_job(fd, s), 0);
		}
	}
	uint64_t s = 0;
	ASSERT_EQ(submit_flags(fd, DRM_RBLN_ENGINE_NEURAL_DMA, 3, {a, b, 0, 0, 64}, 0, &s), 0);
	ASSERT_EQ(wait_job(fd, s), 0);	// the engine runs in order: all before it have ended
	std::vector<drm_rbln_job_time> got;
	drm_rbln_job_times args{};
	ASSERT_EQ(job_times(fd, got, DRM_RBLN_JOB_TIMES_RING + 16, &args), 0);
	EXPECT_EQ(got.size(), size_t{DRM_RBLN_JOB_TIMES_RING});
	EXPECT_EQ(args.lost, extra);
	EXPECT_EQ(got.front().seqno, 1u) << "the oldest are kept";
	ASSERT_EQ(job_times(fd, got, 4, &args), 0);
	EXPECT_EQ(args.lost, 0u) << "counted once";
}

// JOB_TIMES copies a run of records straight out of the ring: one that goes
// past the ring's end comes back whole and in order, in elements of either size.
TEST_F(JobTimes, RecordsAcrossTheRingsEndComeInOrder)
{
	const int fd = fd_.get();
	const uint32_t a = bo(8192, 0, 2), b = bo(8192, 0, 2);
	uint64_t last = 0;
	auto submit = [&](unsigned n) {
		for (unsigned i = 0; i < n; i++) {
			ASSERT_EQ(submit_flags(fd, DRM_RBLN_ENGINE_NEURAL_DMA, 2, {a, b, 0, 0, 64},
					       DRM_RBLN_SUBMIT_TIMES, &last), 0);
			if (i % 128 == 127 || i == n - 1) {
				ASSERT_EQ(wait_job(fd, last), 0);	// one engine, in order: all before it too
			}
		}
	};
	std::vector<drm_rbln_job_time> got;
	drm_rbln_job_times args{};
	// Up to 50 records before the ring's end: all read, so the next go there.
	auto fill_to = [&](unsigned before_end, unsigned consumed) {
		submit(DRM_RBLN_JOB_TIMES_RING - before_end - consumed);
		ASSERT_EQ(job_times(fd, got, DRM_RBLN_JOB_TIMES_RING, &args), 0);
		EXPECT_EQ(got.size(), size_t{DRM_RBLN_JOB_TIMES_RING - before_end - consumed});
		EXPECT_EQ(args.pending, 0u);
	};

	fill_to(50, 0);
	submit(150);		// 50 up to the ring's end, 100 from its start
	ASSERT_EQ(job_times(fd, got, 120, &args), 0);
	ASSERT_EQ(got.size(), 120u) << "50 before the end, 70 after";
	EXPECT_EQ(args.pending, 30u);
	for (size_t i = 0; i < got.size(); i++)
		EXPECT_EQ(got[i].seqno, last - 149 + i) << i;
	ASSERT_EQ(job_times(fd, got, 64, &args), 0);
	ASSERT_EQ(got.size(), 30u);
	EXPECT_EQ(got.back().seqno, last);

	// Again, into elements 8 bytes longer (a newer caller's): each tail zeroed.
	fill_to(50, 100);
	submit(150);
	struct Longer {
		drm_rbln_job_time t;
		uint64_t more;
	};
	std::vector<Longer> big(200, Longer{{}, ~0ull});
	drm_rbln_job_times req{};
	req.entries = reinterpret_cast<uintptr_t>(big.data());
	req.count = 200;
	req.entry_size = sizeof(Longer);
	ASSERT_EQ(::ioctl(fd, DRM_IOCTL_RBLN_JOB_TIMES, &req), 0);
	ASSERT_EQ(req.count, 150u);
	EXPECT_EQ(req.pending, 0u);
	EXPECT_EQ(req.lost, 0u);
	for (uint32_t i = 0; i < req.count; i++) {
		EXPECT_EQ(big[i].t.seqno, last - 149 + i) << i;
		EXPECT_EQ(big[i].more, 0u) << i;
		EXPECT_LE(big[i].t.submit_ns, big[i].t.start_ns);
	}
	EXPECT_EQ(big[150].more, ~0ull) << "beyond .count nothing is written";
}

namespace {

// one_copy() with its out fields (the times too) preset to garbage: SUBMIT
// must set each.
drm_rbln_submit report_args(const drm_rbln_copy &c, uint32_t engine, uint32_t chiplet, uint32_t flags)
{
	drm_rbln_submit s = one_copy(c, engine, chiplet, flags);
	s.ended = 7;
	s.submit_ns = s.start_ns = s.end_ns = ~0ull;
	s.time_flags = ~0u;
	return s;
}

constexpr uint32_t kReportTimes =
	DRM_RBLN_SUBMIT_TIMES | DRM_RBLN_SUBMIT_REPORT_END | DRM_RBLN_SUBMIT_REPORT_TIMES;

} // namespace

// Interface 16: a job that ended inside SUBMIT gives its times there
// (DRM_RBLN_SUBMIT_REPORT_TIMES) and leaves no record in the ring; a job
// still running at SUBMIT's return leaves its record as before, and SUBMIT's
// time fields are 0 for it.
TEST_F(JobTimes, AJobEndedInsideSubmitReportsItsTimesThere)
{
	const int fd = fd_.get();
	uint64_t v = 0;
	ASSERT_EQ(get_param(fd, DRM_RBLN_PARAM_UAPI_VERSION, &v), 0);
	ASSERT_GE(v, 16u);
	const uint32_t a = bo(8192, 0, 1), b = bo(8192, 0, 1);
	const drm_rbln_copy c{a, b, 0, 0, 4096};

	const uint64_t t0 = monotonic_ns();
	drm_rbln_submit direct = report_args(c, DRM_RBLN_ENGINE_DEVICE_HDMA, 1, kReportTimes);
	ASSERT_EQ(::ioctl(fd, DRM_IOCTL_RBLN_SUBMIT, &direct), 0) << strerror(errno);
	const uint64_t t1 = monotonic_ns();
	ASSERT_EQ(direct.ended, 1u) << "a 4 KiB job for an idle engine runs inside SUBMIT";
	expect_ran_within({direct.seqno, direct.submit_ns, direct.start_ns, direct.end_ns, direct.status,
			   direct.time_flags, direct.chiplet, direct.engine}, t0, t1);

	drm_rbln_submit queued{};
	{
		ScheduledJobs only(1);
		ASSERT_EQ(only.error(), 0) << "no_direct";
		queued = report_args(c, DRM_RBLN_ENGINE_DEVICE_HDMA, 1, kReportTimes);
		ASSERT_EQ(::ioctl(fd, DRM_IOCTL_RBLN_SUBMIT, &queued), 0) << strerror(errno);
	}
	EXPECT_EQ(queued.ended, 0u) << "scheduled: not ended inside SUBMIT";
	EXPECT_EQ(queued.submit_ns, 0u);
	EXPECT_EQ(queued.start_ns, 0u);
	EXPECT_EQ(queued.end_ns, 0u);
	EXPECT_EQ(queued.time_flags, 0u);
	ASSERT_EQ(wait_job(fd, queued.seqno), 0);

	std::vector<drm_rbln_job_time> got;
	ASSERT_EQ(job_times(fd, got, 8), 0);
	ASSERT_EQ(got.size(), 1u) << "the scheduled job's record only";
	EXPECT_EQ(got[0].seqno, queued.seqno);
	EXPECT_EQ(got[0].flags, uint32_t{DRM_RBLN_JOB_TIME_RAN});
	EXPECT_LE(direct.end_ns, got[0].start_ns) << "one engine, in order";
}

// REPORT_TIMES needs TIMES and REPORT_END, reserved3 is 0, and a batch's
// elements reach reserved3 to carry it; each refusal submits nothing.  A
// batch element that reaches it gets its times.
TEST_F(JobTimes, ReportTimesNeedsItsCompanionsAndRoom)
{
	const int fd = fd_.get();
	const uint32_t a = bo(8192, 0, 2), b = bo(8192, 0, 2);
	const drm_rbln_copy c{a, b, 0, 0, 4096};
	auto refused = [&](uint32_t flags, uint32_t reserved3) {
		drm_rbln_submit s = report_args(c, DRM_RBLN_ENGINE_TASK_DMA, 2, flags);
		s.reserved3 = reserved3;
		return ::ioctl(fd, DRM_IOCTL_RBLN_SUBMIT, &s) ? errno : 0;
	};
	EXPECT_EQ(refused(DRM_RBLN_SUBMIT_REPORT_TIMES, 0), EINVAL);
	EXPECT_EQ(refused(DRM_RBLN_SUBMIT_REPORT_TIMES | DRM_RBLN_SUBMIT_TIMES, 0), EINVAL);
	EXPECT_EQ(refused(DRM_RBLN_SUBMIT_REPORT_TIMES | DRM_RBLN_SUBMIT_REPORT_END, 0), EINVAL);
	EXPECT_EQ(refused(kReportTimes, 1), EINVAL);
	EXPECT_EQ(refused(0, 1u << 31), EINVAL) << "reserved3 without the flag too";

	// A batch of two: the second element's struct ends before the times.
	std::vector<drm_rbln_submit> elems = {report_args(c, DRM_RBLN_ENGINE_TASK_DMA, 2, kReportTimes),
					      report_args(c, DRM_RBLN_ENGINE_TASK_DMA, 2, kReportTimes)};
	drm_rbln_submit_batch batch{};
	batch.submits = reinterpret_cast<uintptr_t>(elems.data());
	batch.count = 2;
	batch.submit_size = offsetof(drm_rbln_submit, submit_ns);
	std::vector<uint8_t> short_elems(2 * batch.submit_size);
	for (size_t i = 0; i < 2; i++)
		std::memcpy(short_elems.data() + i * batch.submit_size, &elems[i], batch.submit_size);
	batch.submits = reinterpret_cast<uintptr_t>(short_elems.data());
	EXPECT_EQ(::ioctl(fd, DRM_IOCTL_RBLN_SUBMIT_BATCH, &batch) ? errno : 0, EINVAL)
		<< "no room for the times: nothing submitted";

	// Nothing went in: the next job is seqno 1, and no record waits.
	drm_rbln_submit_batch whole{};
	whole.submits = reinterpret_cast<uintptr_t>(elems.data());
	whole.count = 2;
	whole.submit_size = sizeof(drm_rbln_submit);
	ASSERT_EQ(::ioctl(fd, DRM_IOCTL_RBLN_SUBMIT_BATCH, &whole), 0) << strerror(errno);
	ASSERT_EQ(whole.submitted, 2u);
	EXPECT_EQ(whole.error, 0);
	EXPECT_EQ(elems[0].seqno, 1u) << "the refused calls took no seqno";
	std::vector<drm_rbln_job_time> ring;
	for (const auto &e : elems) {
		ASSERT_EQ(wait_job(fd, e.seqno), 0);
		if (e.ended) {
			EXPECT_EQ(e.time_flags, uint32_t{DRM_RBLN_JOB_TIME_RAN}) << "seqno " << e.seqno;
			EXPECT_LE(e.submit_ns, e.start_ns);
			EXPECT_LT(e.start_ns, e.end_ns);
		} else {
			EXPECT_EQ(e.end_ns, 0u) << "seqno " << e.seqno;
		}
	}
	EXPECT_EQ(elems[0].ended, 1u) << "the first job for an idle engine runs inside SUBMIT_BATCH";
	ASSERT_EQ(job_times(fd, ring, 8), 0);
	EXPECT_EQ(ring.size(), size_t(!elems[1].ended)) << "a record only for a job not ended inside";
}
