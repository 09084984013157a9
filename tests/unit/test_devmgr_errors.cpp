// libdevmgr's pure logic: driver errnos to stable codes, sizes in messages.
#include <cerrno>

#include <gtest/gtest.h>

#include "../../libdevmgr/src/device_state.h"

using rbln::Errc;

TEST(DevmgrErrors, ErrnoToCode)
{
	const std::pair<int, Errc> rows[] = {
		{0, Errc::ok},
		{EINVAL, Errc::invalid_argument},
		{E2BIG, Errc::invalid_argument},
		{EFAULT, Errc::invalid_argument},
		{EBADF, Errc::invalid_argument},
		{ENOENT, Errc::not_found},
		{ENODEV, Errc::no_device},
		{EACCES, Errc::permission},
		{EPERM, Errc::permission},
		{ENOSPC, Errc::device_memory},
		{ENOMEM, Errc::host_memory},
		{EAGAIN, Errc::busy},
		{ETIME, Errc::timeout},
		{ETIMEDOUT, Errc::engine_hung},
		{EIO, Errc::job_failed},
		{ECANCELED, Errc::canceled},
		{ELOOP, Errc::system},
	};
	for (auto [err, code] : rows)
		EXPECT_EQ(rbln::errc_from_errno(err), code) << "errno " << err;
}

TEST(DevmgrErrors, CodesMatchTheCApi)
{
	EXPECT_EQ(int(Errc::device_memory), RBLN_ERR_DEVICE_MEMORY);
	EXPECT_EQ(int(Errc::system), RBLN_ERR_SYSTEM);
	EXPECT_STREQ(rbln_status_string(RBLN_ERR_DEVICE_MEMORY), "out of device memory");
	EXPECT_STREQ(rbln_status_string(rbln_status(99)), "unknown status");
}

TEST(DevmgrErrors, SizesAreReadable)
{
	EXPECT_EQ(rbln::detail::bytes_text(0), "0 B");
	EXPECT_EQ(rbln::detail::bytes_text(1023), "1023 B");
	EXPECT_EQ(rbln::detail::bytes_text(4095), "3.9 KiB") << "rounded down, never up";
	EXPECT_EQ(rbln::detail::bytes_text(16ull << 20), "16 MiB");
	EXPECT_EQ(rbln::detail::bytes_text(3ull << 29), "1.5 GiB");
	EXPECT_EQ(rbln::detail::bytes_text(140ull << 30), "140 GiB");
}
