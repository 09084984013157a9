// What one user can take from the others, against the real module: a full
// job table is an error libdrm's drmIoctl() returns instead of retrying
// forever.
#include <cerrno>
#include <string>

#include <unistd.h>
#include <xf86drm.h>

#include <gtest/gtest.h>

#include "rbln_test_util.h"

using namespace rbln::test;

// DRM_RBLN_MAX_INFLIGHT failed jobs not waited for fill a file's table; the
// next SUBMIT fails with ENOSPC, which drmIoctl() returns (it retries EAGAIN,
// the error before interface 13, forever).  As a member of group rbln.
TEST(Limits, FullJobTableIsAnErrorDrmIoctlReturns)
{
	ASSERT_EQ(debugfs_write(1, "fail_next_jobs", std::to_string(DRM_RBLN_MAX_INFLIGHT)), 0);
	const std::string node = sim_device(1)->node;
	int rc = run_as_nobody(true, [&] {
		Fd fd = open_node(node);
		uint32_t a = 0, b = 0;
		if (!fd || bo_create(fd.get(), 4096, 0, 0, &a) || bo_create(fd.get(), 4096, 0, 0, &b))
			return 10;
		drm_rbln_copy copy{a, b, 0, 0, 4096};
		drm_rbln_submit s{};
		s.engine = DRM_RBLN_ENGINE_NEURAL_DMA;
		s.copies = reinterpret_cast<uintptr_t>(&copy);
		s.copy_count = 1;
		s.copy_size = sizeof(copy);
		for (int i = 0; i < DRM_RBLN_MAX_INFLIGHT; i++)
			if (drmIoctl(fd.get(), DRM_IOCTL_RBLN_SUBMIT, &s))
				return 11;
		alarm(5);	// a drmIoctl() spinning on the error ends here
		int ret = drmIoctl(fd.get(), DRM_IOCTL_RBLN_SUBMIT, &s);
		return ret == -1 && errno == ENOSPC ? 0 : 12;
	});
	EXPECT_EQ(rc, 0) << "-1: killed by the alarm, drmIoctl() kept retrying";
	EXPECT_EQ(debugfs_write(1, "fail_next_jobs", "0"), 0);
}
