// libdevmgr's pure logic: driver errnos to stable codes, sizes in messages.
#include <cerrno>
#include <sstream>

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

// The facts file: an ABI mismatch names the library path and both versions.
TEST(Abi, MismatchNamesTheLibraryFileAndBothVersions)
{
	std::string m = rbln::detail::abi_mismatch_message("/usr/lib/x86_64-linux-gnu/librbln_devmgr.so.0.3",
							    13, "/dev/rbln1", "0.2.0", 12, 9);
	EXPECT_NE(m.find("RBLN ABI mismatch: /usr/lib/x86_64-linux-gnu/librbln_devmgr.so.0.3 was built "
			 "against interface 13"), std::string::npos) << m;
	EXPECT_NE(m.find("/dev/rbln1 is driven by rbln.ko 0.2.0"), std::string::npos) << m;
	EXPECT_NE(m.find("implements interface 12 and accepts consumers built against 9..12"),
		  std::string::npos) << m;
	EXPECT_NE(m.find("RBLN_SKIP_ABI_CHECK=1"), std::string::npos) << m;
	// Linked statically here, so the loaded file is this test program: a path, never empty.
	EXPECT_EQ(rbln::detail::library_path().front(), '/');
}

// The DRM fdinfo keys of an rbln file (kernel/rbln_usage.c and the DRM core).
TEST(Fdinfo, ReadsTheClientAndEachEnginesBusyTime)
{
	std::istringstream rbln("pos:\t0\nflags:\t02100002\nmnt_id:\t25\nino:\t10\n"
				"drm-driver:\trbln\ndrm-client-id:\t42\ndrm-total-memory:\t8 KiB\n"
				"drm-engine-neural_dma:\t0 ns\ndrm-engine-task_dma:\t15 ns\n"
				"drm-engine-device_hdma:\t0 ns\ndrm-engine-external_hdma:\t123456789 ns\n");
	auto f = rbln::detail::parse_fdinfo(rbln);
	ASSERT_TRUE(f);
	EXPECT_EQ(f->client_id, 42u);
	EXPECT_EQ(f->engine_busy_ns[1], 15u);
	EXPECT_EQ(f->engine_busy_ns[3], 123456789u);

	std::istringstream other("drm-driver:\tamdgpu\ndrm-client-id:\t7\ndrm-engine-gfx:\t10 ns\n");
	EXPECT_FALSE(rbln::detail::parse_fdinfo(other)) << "another driver's file";
	std::istringstream plain("pos:\t0\nflags:\t02\n");
	EXPECT_FALSE(rbln::detail::parse_fdinfo(plain)) << "not a DRM file";
	std::istringstream old_kernel("drm-driver:\trbln\ndrm-client-id:\t3\n");
	auto o = rbln::detail::parse_fdinfo(old_kernel);
	ASSERT_TRUE(o);
	EXPECT_FALSE(o->engine_busy_ns[0]) << "no engine keys: unknown, not zero";
}
