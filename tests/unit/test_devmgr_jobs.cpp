// libdevmgr's job rules that need no device: how many jobs a job may wait
// for, syncobj deadlines, and the C ABI's argument checks.
#include <cerrno>
#include <limits>

#include <gtest/gtest.h>

#include "../../libdevmgr/src/job_state.h"
#include "rbln_drm.h"

using namespace std::chrono_literals;

TEST(DevmgrJobs, AJobWaitsForAtMostTheDriversLimit)
{
	rbln::detail::DeviceState dev;	// not opened: only its name is used
	dev.info.index = 1;
	EXPECT_NO_THROW(rbln::detail::check_dependency_count(dev, 0));
	EXPECT_NO_THROW(rbln::detail::check_dependency_count(dev, DRM_RBLN_MAX_IN_SYNCS));
	try {
		rbln::detail::check_dependency_count(dev, DRM_RBLN_MAX_IN_SYNCS + 1);
		ADD_FAILURE() << "65 dependencies accepted";
	} catch (const rbln::Error &e) {
		EXPECT_EQ(e.code(), rbln::Errc::invalid_argument);
		EXPECT_STREQ(e.what(), "rbln:1: a job may wait for at most 64 jobs, not 65; wait for some "
				       "of them first");
	}
	EXPECT_EQ(RBLN_SUBMIT_MAX_AFTER, DRM_RBLN_MAX_IN_SYNCS) << "the C ABI states the same limit";
}

TEST(DevmgrJobs, SyncobjDeadlinesAreAbsoluteAndSaturate)
{
	using rbln::detail::syncobj_deadline_ns;
	constexpr int64_t max = std::numeric_limits<int64_t>::max();
	EXPECT_EQ(syncobj_deadline_ns(1000, 0ns), 1000);
	EXPECT_EQ(syncobj_deadline_ns(1000, 5s), 5'000'001'000);
	EXPECT_EQ(syncobj_deadline_ns(1000, -3ms), 1000) << "a negative timeout polls";
	EXPECT_EQ(syncobj_deadline_ns(1000, std::chrono::nanoseconds::max()), max);
	EXPECT_EQ(syncobj_deadline_ns(max - 10, 11ns), max);
	EXPECT_EQ(syncobj_deadline_ns(max - 10, 10ns), max);
}

TEST(DevmgrJobs, CApiNamesTheBadArgument)
{
	rbln_job *out = nullptr;
	EXPECT_EQ(rbln_submit_after(nullptr, RBLN_ENGINE_TASK_DMA, 0, nullptr, 0, nullptr, nullptr, 0,
				    &out), RBLN_ERR_INVALID_ARGUMENT);
	EXPECT_STREQ(rbln_last_error(), "rbln_submit_after: device, copies or out is NULL");
	EXPECT_EQ(rbln_submit(nullptr, RBLN_ENGINE_TASK_DMA, 0, nullptr, 0, nullptr, &out),
		  RBLN_ERR_INVALID_ARGUMENT);
	EXPECT_STREQ(rbln_last_error(), "rbln_submit: device, copies or out is NULL");
	rbln_job *jobs[2] = {};
	size_t submitted = 9;
	EXPECT_EQ(rbln_submit_batch(nullptr, nullptr, 2, jobs, &submitted), RBLN_ERR_INVALID_ARGUMENT);
	EXPECT_STREQ(rbln_last_error(), "rbln_submit_batch: device, descs or jobs is NULL");
	EXPECT_EQ(submitted, 0u);
	int fd = -1;
	EXPECT_EQ(rbln_job_fd(nullptr, &fd), RBLN_ERR_INVALID_ARGUMENT);
	EXPECT_STREQ(rbln_last_error(), "rbln_job_fd: job or fd is NULL");
	EXPECT_EQ(fd, -1);
}
