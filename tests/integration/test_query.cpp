// GET_PARAM and DEVICE_INFO answer what sysfs says, and reject bad input with
// EINVAL without writing anything back.
#include <cstring>
#include <map>

#include <sys/ioctl.h>

#include <gtest/gtest.h>

#include "rbln_test_util.h"

using namespace rbln::test;

namespace {

uint64_t sysfs_u64(const SimDevice &d, const std::string &attr)
{
	auto v = read_file(d.sysfs + "/" + attr);
	EXPECT_TRUE(v) << attr;
	return v ? std::stoull(*v, nullptr, 0) : ~0ull;
}

std::string sysfs_str(const SimDevice &d, const std::string &attr)
{
	return read_file(d.sysfs + "/" + attr).value_or("<unreadable>");
}

uint64_t param(int fd, uint32_t p, uint32_t flags = 0, uint32_t chiplet = 0)
{
	uint64_t v = ~0ull;
	EXPECT_EQ(get_param(fd, p, &v, flags, chiplet), 0) << "param " << p;
	return v;
}

const std::map<std::string, uint64_t> kSkuIds = {
	{"atom", DRM_RBLN_SKU_ATOM},
	{"atom-max", DRM_RBLN_SKU_ATOM_MAX},
	{"rebel100", DRM_RBLN_SKU_REBEL100},
};

class Query : public ::testing::Test {
protected:
	void SetUp() override
	{
		devices_ = sim_devices();
		ASSERT_GE(devices_.size(), 2u);
	}
	std::vector<SimDevice> devices_;
};

} // namespace

TEST_F(Query, InterfaceVersions)
{
	for (const auto &d : devices_) {
		Fd fd = open_node(d.node);
		ASSERT_TRUE(fd) << d.node;
		EXPECT_EQ(param(fd.get(), DRM_RBLN_PARAM_UAPI_VERSION), uint64_t{DRM_RBLN_UAPI_VERSION});
		EXPECT_EQ(param(fd.get(), DRM_RBLN_PARAM_UAPI_COMPAT_VERSION),
			  uint64_t{DRM_RBLN_UAPI_COMPAT_VERSION});
	}
}

TEST_F(Query, ParamsMatchSysfs)
{
	for (const auto &d : devices_) {
		Fd fd = open_node(d.node);
		ASSERT_TRUE(fd) << d.node;
		int f = fd.get();
		EXPECT_EQ(param(f, DRM_RBLN_PARAM_DEVICE_INDEX), d.index);
		EXPECT_EQ(param(f, DRM_RBLN_PARAM_SKU), kSkuIds.at(sysfs_str(d, "sku")));
		EXPECT_EQ(param(f, DRM_RBLN_PARAM_PCI_DEVICE_ID), sysfs_u64(d, "pci_device_id"));
		EXPECT_EQ(param(f, DRM_RBLN_PARAM_CHIPLET_COUNT), sysfs_u64(d, "chiplet_count"));
		EXPECT_EQ(param(f, DRM_RBLN_PARAM_CAPABILITIES), sysfs_u64(d, "capabilities"));
		EXPECT_EQ(param(f, DRM_RBLN_PARAM_STATUS), sysfs_u64(d, "status_code"));
		EXPECT_EQ(sysfs_str(d, "status"), "READY");
		EXPECT_EQ(param(f, DRM_RBLN_PARAM_MEMORY_TOTAL), sysfs_u64(d, "memory_total"));
		EXPECT_EQ(param(f, DRM_RBLN_PARAM_MEMORY_USED), sysfs_u64(d, "memory_used"));
		uint64_t busy_sysfs = sysfs_u64(d, "busy_ns");
		EXPECT_GE(param(f, DRM_RBLN_PARAM_BUSY_NS), busy_sysfs);

		uint64_t caps = param(f, DRM_RBLN_PARAM_CAPABILITIES);
		EXPECT_TRUE(caps & DRM_RBLN_CAP_SIMULATED);
		EXPECT_EQ(bool(caps & DRM_RBLN_CAP_ACCEL_NODE), kernel_has_accel());
	}
}

TEST_F(Query, ChipletParamsMatchSysfs)
{
	for (const auto &d : devices_) {
		Fd fd = open_node(d.node);
		ASSERT_TRUE(fd);
		uint64_t chiplets = param(fd.get(), DRM_RBLN_PARAM_CHIPLET_COUNT);
		EXPECT_EQ(chiplets, sysfs_str(d, "sku") == "rebel100" ? 4u : 1u);
		uint64_t memory_sum = 0;
		for (uint32_t c = 0; c < chiplets; c++) {
			std::string dir = d.sysfs + "/chiplet" + std::to_string(c);
			uint64_t total = param(fd.get(), DRM_RBLN_PARAM_MEMORY_TOTAL,
					       DRM_RBLN_GET_PARAM_CHIPLET, c);
			EXPECT_EQ(std::to_string(total), read_file(dir + "/memory_total").value_or(""));
			EXPECT_EQ(std::to_string(param(fd.get(), DRM_RBLN_PARAM_MEMORY_USED,
						       DRM_RBLN_GET_PARAM_CHIPLET, c)),
				  read_file(dir + "/memory_used").value_or(""));
			memory_sum += total;

			uint64_t mask = param(fd.get(), DRM_RBLN_PARAM_ENGINE_MASK,
					      DRM_RBLN_GET_PARAM_CHIPLET, c);
			std::string expect = "neural_dma task_dma device_hdma";
			uint64_t expect_mask = 0x7;
			if (c == 0) {	// External HDMA exists only on chiplet 0.
				expect += " external_hdma";
				expect_mask |= 1u << DRM_RBLN_ENGINE_EXTERNAL_HDMA;
			}
			EXPECT_EQ(mask, expect_mask) << "chiplet " << c;
			EXPECT_EQ(read_file(dir + "/engines").value_or(""), expect);
		}
		EXPECT_LE(memory_sum, param(fd.get(), DRM_RBLN_PARAM_MEMORY_TOTAL));
		EXPECT_FALSE(read_file(d.sysfs + "/chiplet" + std::to_string(chiplets) + "/engines"));
	}
}

TEST_F(Query, DeviceInfoMatchesSysfs)
{
	auto driver_version = read_file("/sys/module/rbln/version");
	ASSERT_TRUE(driver_version);
	for (const auto &d : devices_) {
		Fd fd = open_node(d.node);
		ASSERT_TRUE(fd);
		drm_rbln_device_info info{};
		ASSERT_EQ(device_info(fd.get(), info), 0);
		EXPECT_EQ(info.index, d.index);
		EXPECT_EQ(info.sku, kSkuIds.at(sysfs_str(d, "sku")));
		EXPECT_EQ(info.pci_vendor_id, DRM_RBLN_PCI_VENDOR_ID);
		EXPECT_EQ(info.pci_device_id, sysfs_u64(d, "pci_device_id"));
		EXPECT_EQ(info.chiplet_count, sysfs_u64(d, "chiplet_count"));
		EXPECT_EQ(std::to_string(info.numa_node), sysfs_str(d, "numa_node"));
		EXPECT_EQ(info.uapi_version, uint32_t{DRM_RBLN_UAPI_VERSION});
		EXPECT_EQ(info.memory_total, sysfs_u64(d, "memory_total"));
		EXPECT_EQ(info.capabilities, sysfs_u64(d, "capabilities"));
		EXPECT_STREQ(info.name, sysfs_str(d, "name").c_str());
		EXPECT_STREQ(info.serial, sysfs_str(d, "serial").c_str());
		EXPECT_STREQ(info.pci_bus_id, sysfs_str(d, "pci_bus_id").c_str());
		EXPECT_STREQ(info.firmware_version, sysfs_str(d, "firmware_version").c_str());
		EXPECT_STREQ(info.driver_version, driver_version->c_str());

		char uuid[37];
		const uint8_t *u = info.uuid;
		snprintf(uuid, sizeof(uuid),
			 "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x",
			 u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11],
			 u[12], u[13], u[14], u[15]);
		EXPECT_EQ(uuid, sysfs_str(d, "uuid"));
	}
}

// One row per field and rule.
// The newest param of this header; one past it must be unknown to the driver.
constexpr uint32_t kLastParam = DRM_RBLN_PARAM_JOB_MAX_BYTES;	// GET_PARAM's last

struct BadGetParam {
	const char *why;
	drm_rbln_get_param args;
};

TEST_F(Query, BadGetParamIsRejectedAndNothingIsWritten)
{
	const BadGetParam rows[] = {
		{"unknown param", {.param = 0x7fff, .flags = 0, .chiplet = 0, .reserved = 0, .value = 0}},
		{"param one past the last", {.param = kLastParam + 1, .flags = 0, .chiplet = 0, .reserved = 0, .value = 0}},
		{"unknown flag", {.param = DRM_RBLN_PARAM_UAPI_VERSION, .flags = 1u << 1, .chiplet = 0, .reserved = 0, .value = 0}},
		{"reserved set", {.param = DRM_RBLN_PARAM_UAPI_VERSION, .flags = 0, .chiplet = 0, .reserved = 1, .value = 0}},
		{"chiplet without flag", {.param = DRM_RBLN_PARAM_MEMORY_TOTAL, .flags = 0, .chiplet = 1, .reserved = 0, .value = 0}},
		{"chiplet out of range", {.param = DRM_RBLN_PARAM_MEMORY_TOTAL, .flags = DRM_RBLN_GET_PARAM_CHIPLET, .chiplet = 4, .reserved = 0, .value = 0}},
		{"huge chiplet", {.param = DRM_RBLN_PARAM_MEMORY_USED, .flags = DRM_RBLN_GET_PARAM_CHIPLET, .chiplet = ~0u, .reserved = 0, .value = 0}},
		{"device-wide param per chiplet", {.param = DRM_RBLN_PARAM_UAPI_VERSION, .flags = DRM_RBLN_GET_PARAM_CHIPLET, .chiplet = 0, .reserved = 0, .value = 0}},
		{"chiplet-only param device-wide", {.param = DRM_RBLN_PARAM_ENGINE_MASK, .flags = 0, .chiplet = 0, .reserved = 0, .value = 0}},
	};
	for (const auto &d : devices_) {
		Fd fd = open_node(d.node);
		ASSERT_TRUE(fd);
		for (const auto &row : rows) {
			drm_rbln_get_param args = row.args;
			args.value = 0x5a5a5a5a5a5a5a5aull;
			EXPECT_EQ(get_param(fd.get(), args), EINVAL) << row.why << " on " << d.node;
			EXPECT_EQ(args.value, 0x5a5a5a5a5a5a5a5aull) << row.why;
		}
	}
}

TEST_F(Query, BadDeviceInfoIsRejected)
{
	Fd fd = open_node(devices_.front().node);
	ASSERT_TRUE(fd);
	drm_rbln_device_info info{};
	info.flags = 1;
	EXPECT_EQ(device_info(fd.get(), info), EINVAL) << "flags";
	EXPECT_EQ(info.index, 0u);
	info = {};
	info.reserved0 = 1;
	EXPECT_EQ(device_info(fd.get(), info), EINVAL) << "reserved0";
	EXPECT_EQ(info.name[0], '\0');
}

TEST_F(Query, UnknownIoctlIsRejected)
{
	Fd fd = open_node(devices_.front().node);
	ASSERT_TRUE(fd);
	drm_rbln_get_param args{};
	unsigned long bad = DRM_IOWR(DRM_COMMAND_BASE + 0x3f, struct drm_rbln_get_param);
	EXPECT_NE(::ioctl(fd.get(), bad, &args), 0);
	EXPECT_EQ(errno, EINVAL);
}

TEST_F(Query, DeviceStatusMatchesSysfs)
{
	for (const auto &d : devices_) {
		Fd fd = open_node(d.node);
		ASSERT_TRUE(fd);
		drm_rbln_device_status st{};
		ASSERT_EQ(ioctl(fd.get(), DRM_IOCTL_RBLN_DEVICE_STATUS, &st), 0);
		EXPECT_EQ(st.status, sysfs_u64(d, "status_code"));
		EXPECT_EQ(uint64_t(st.temperature_mc), sysfs_u64(d, "temperature"));
		EXPECT_EQ(st.power_uw, sysfs_u64(d, "power_draw"));
		EXPECT_EQ("P" + std::to_string(st.pstate), sysfs_str(d, "pstate"));
		EXPECT_EQ(st.memory_total, sysfs_u64(d, "memory_total"));
		EXPECT_EQ(st.memory_used, sysfs_u64(d, "memory_used"));
		EXPECT_EQ(st.memory_placed, sysfs_u64(d, "memory_placed"));
		EXPECT_LE(sysfs_u64(d, "busy_ns"), st.busy_ns + 1) << "monotonic";

		drm_rbln_device_status bad{};
		bad.flags = 1;
		EXPECT_EQ(ioctl(fd.get(), DRM_IOCTL_RBLN_DEVICE_STATUS, &bad) ? errno : 0, EINVAL);
		bad = {};
		bad.reserved = 1;
		EXPECT_EQ(ioctl(fd.get(), DRM_IOCTL_RBLN_DEVICE_STATUS, &bad) ? errno : 0, EINVAL);
	}
}
