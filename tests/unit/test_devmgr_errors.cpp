// libdevmgr's pure logic: driver errnos to stable codes, sizes in messages.
#include <cerrno>

#include <gtest/gtest.h>

#include "../../libdevmgr/src/device_state.h"
#include "rbln_drm.h"

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

TEST(DevmgrAbi, ConsumerMustFallInsideTheDriversRange)
{
	struct Row {
		uint32_t built;
		std::optional<uint32_t> version, compat;
		bool ok;
		bool warns;
	};
	const Row rows[] = {
		{3, 3, 1, true, false},	 // newest
		{1, 3, 1, true, false},	 // oldest still accepted
		{2, 3, 2, true, false},
		{1, 3, 2, false, false}, // too old for this driver
		{4, 3, 1, false, false}, // newer than the driver
		{3, std::nullopt, std::nullopt, true, true},	// driver without the numbers
		{3, 3, std::nullopt, true, true},
	};
	for (const auto &r : rows) {
		auto v = rbln::check_abi(r.built, r.version, r.compat);
		EXPECT_EQ(v.ok, r.ok) << r.built;
		EXPECT_EQ(!v.warning.empty(), r.warns) << r.built;
	}
	EXPECT_EQ(rbln::built_uapi_version(), uint32_t{DRM_RBLN_UAPI_VERSION});
}
