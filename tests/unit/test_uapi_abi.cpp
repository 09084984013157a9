// The UAPI is frozen once released: these are the sizes, offsets and values
// user space was built against, written as literals.  A failure here means an
// ABI break, not a test to update; structs may only grow at the end (and then
// only the size check changes), and anything added is a new interface version.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include <gtest/gtest.h>

#include "rbln_drm.h"

#define EXPECT_FIELD(type, field, offset) EXPECT_EQ(offsetof(type, field), size_t{offset}) << #field

TEST(UapiAbi, GetParamLayout)
{
	using T = drm_rbln_get_param;
	EXPECT_EQ(sizeof(T), 24u);
	EXPECT_FIELD(T, param, 0);
	EXPECT_FIELD(T, flags, 4);
	EXPECT_FIELD(T, chiplet, 8);
	EXPECT_FIELD(T, reserved, 12);
	EXPECT_FIELD(T, value, 16);
}

TEST(UapiAbi, DeviceInfoLayout)
{
	using T = drm_rbln_device_info;
	EXPECT_EQ(sizeof(T), 216u);
	EXPECT_FIELD(T, flags, 0);
	EXPECT_FIELD(T, reserved0, 4);
	EXPECT_FIELD(T, index, 8);
	EXPECT_FIELD(T, sku, 12);
	EXPECT_FIELD(T, pci_vendor_id, 16);
	EXPECT_FIELD(T, pci_device_id, 18);
	EXPECT_FIELD(T, chiplet_count, 20);
	EXPECT_FIELD(T, numa_node, 24);
	EXPECT_FIELD(T, uapi_version, 28);
	EXPECT_FIELD(T, memory_total, 32);
	EXPECT_FIELD(T, capabilities, 40);
	EXPECT_FIELD(T, uuid, 48);
	EXPECT_FIELD(T, name, 64);
	EXPECT_FIELD(T, serial, 96);
	EXPECT_FIELD(T, pci_bus_id, 128);
	EXPECT_FIELD(T, firmware_version, 144);
	EXPECT_FIELD(T, driver_version, 176);
	EXPECT_FIELD(T, pci_link_speed_mts, 208);
	EXPECT_FIELD(T, pci_link_width, 212);
}

TEST(UapiAbi, BufferObjectLayouts)
{
	EXPECT_EQ(sizeof(drm_rbln_bo_create), 24u);
	EXPECT_FIELD(drm_rbln_bo_create, size, 0);
	EXPECT_FIELD(drm_rbln_bo_create, flags, 8);
	EXPECT_FIELD(drm_rbln_bo_create, chiplet, 12);
	EXPECT_FIELD(drm_rbln_bo_create, handle, 16);
	EXPECT_FIELD(drm_rbln_bo_create, reserved, 20);

	EXPECT_EQ(sizeof(drm_rbln_bo_info), 40u);
	EXPECT_FIELD(drm_rbln_bo_info, handle, 0);
	EXPECT_FIELD(drm_rbln_bo_info, flags, 4);
	EXPECT_FIELD(drm_rbln_bo_info, size, 8);
	EXPECT_FIELD(drm_rbln_bo_info, device_address, 16);
	EXPECT_FIELD(drm_rbln_bo_info, mmap_offset, 24);
	EXPECT_FIELD(drm_rbln_bo_info, chiplet, 32);
	EXPECT_FIELD(drm_rbln_bo_info, reserved, 36);
}

TEST(UapiAbi, DmaLayouts)
{
	EXPECT_EQ(sizeof(drm_rbln_copy), 32u);
	EXPECT_FIELD(drm_rbln_copy, src_handle, 0);
	EXPECT_FIELD(drm_rbln_copy, dst_handle, 4);
	EXPECT_FIELD(drm_rbln_copy, src_offset, 8);
	EXPECT_FIELD(drm_rbln_copy, dst_offset, 16);
	EXPECT_FIELD(drm_rbln_copy, size, 24);

	EXPECT_EQ(sizeof(drm_rbln_submit), 120u);
	EXPECT_FIELD(drm_rbln_submit, engine, 0);
	EXPECT_FIELD(drm_rbln_submit, chiplet, 4);
	EXPECT_FIELD(drm_rbln_submit, copies, 8);
	EXPECT_FIELD(drm_rbln_submit, copy_count, 16);
	EXPECT_FIELD(drm_rbln_submit, copy_size, 20);
	EXPECT_FIELD(drm_rbln_submit, label, 24);
	EXPECT_FIELD(drm_rbln_submit, flags, 32);
	EXPECT_FIELD(drm_rbln_submit, reserved, 36);
	EXPECT_FIELD(drm_rbln_submit, seqno, 40);
	EXPECT_FIELD(drm_rbln_submit, in_syncs, 48);
	EXPECT_FIELD(drm_rbln_submit, in_sync_count, 56);
	EXPECT_FIELD(drm_rbln_submit, reserved2, 60);
	EXPECT_FIELD(drm_rbln_submit, out_sync, 64);
	EXPECT_FIELD(drm_rbln_submit, ended, 80);
	EXPECT_FIELD(drm_rbln_submit, status, 84);
	EXPECT_FIELD(drm_rbln_submit, submit_ns, 88);
	EXPECT_FIELD(drm_rbln_submit, start_ns, 96);
	EXPECT_FIELD(drm_rbln_submit, end_ns, 104);
	EXPECT_FIELD(drm_rbln_submit, time_flags, 112);
	EXPECT_FIELD(drm_rbln_submit, reserved3, 116);
	EXPECT_EQ(sizeof(drm_rbln_sync), 16u);
	EXPECT_FIELD(drm_rbln_sync, handle, 0);
	EXPECT_FIELD(drm_rbln_sync, flags, 4);
	EXPECT_FIELD(drm_rbln_sync, point, 8);

	EXPECT_EQ(sizeof(drm_rbln_submit_batch), 32u);
	EXPECT_FIELD(drm_rbln_submit_batch, submits, 0);
	EXPECT_FIELD(drm_rbln_submit_batch, count, 8);
	EXPECT_FIELD(drm_rbln_submit_batch, submit_size, 12);
	EXPECT_FIELD(drm_rbln_submit_batch, flags, 16);
	EXPECT_FIELD(drm_rbln_submit_batch, submitted, 20);
	EXPECT_FIELD(drm_rbln_submit_batch, error, 24);
	EXPECT_FIELD(drm_rbln_submit_batch, reserved, 28);

	EXPECT_EQ(sizeof(drm_rbln_wait), 24u);
	EXPECT_FIELD(drm_rbln_wait, seqno, 0);
	EXPECT_FIELD(drm_rbln_wait, timeout_ns, 8);
	EXPECT_FIELD(drm_rbln_wait, flags, 16);
	EXPECT_FIELD(drm_rbln_wait, status, 20);
}

TEST(UapiAbi, JobTimesLayouts)
{
	EXPECT_EQ(sizeof(drm_rbln_job_time), 48u);
	EXPECT_FIELD(drm_rbln_job_time, seqno, 0);
	EXPECT_FIELD(drm_rbln_job_time, submit_ns, 8);
	EXPECT_FIELD(drm_rbln_job_time, start_ns, 16);
	EXPECT_FIELD(drm_rbln_job_time, end_ns, 24);
	EXPECT_FIELD(drm_rbln_job_time, status, 32);
	EXPECT_FIELD(drm_rbln_job_time, flags, 36);
	EXPECT_FIELD(drm_rbln_job_time, chiplet, 40);
	EXPECT_FIELD(drm_rbln_job_time, engine, 44);

	EXPECT_EQ(sizeof(drm_rbln_job_times), 32u);
	EXPECT_FIELD(drm_rbln_job_times, entries, 0);
	EXPECT_FIELD(drm_rbln_job_times, count, 8);
	EXPECT_FIELD(drm_rbln_job_times, entry_size, 12);
	EXPECT_FIELD(drm_rbln_job_times, flags, 16);
	EXPECT_FIELD(drm_rbln_job_times, lost, 20);
	EXPECT_FIELD(drm_rbln_job_times, pending, 24);
	EXPECT_FIELD(drm_rbln_job_times, reserved, 28);
}

TEST(UapiAbi, ClientUsageLayout)
{
	using T = drm_rbln_client_usage;
	EXPECT_EQ(sizeof(T), 72u);
	EXPECT_FIELD(T, flags, 0);
	EXPECT_FIELD(T, reserved, 4);
	EXPECT_FIELD(T, client_id, 8);
	EXPECT_FIELD(T, memory_total, 16);
	EXPECT_FIELD(T, memory_resident, 24);
	EXPECT_FIELD(T, device_memory, 32);
	EXPECT_FIELD(T, engine_busy_ns, 40);
}

TEST(UapiAbi, ClientListLayouts)
{
	EXPECT_EQ(sizeof(drm_rbln_acquire), 8u);
	EXPECT_EQ(sizeof(drm_rbln_client), 56u);
	EXPECT_FIELD(drm_rbln_client, client_id, 0);
	EXPECT_FIELD(drm_rbln_client, creator_pid, 8);
	EXPECT_FIELD(drm_rbln_client, uid, 12);
	EXPECT_FIELD(drm_rbln_client, flags, 16);
	EXPECT_FIELD(drm_rbln_client, reserved, 20);
	EXPECT_FIELD(drm_rbln_client, device_memory, 24);
	EXPECT_FIELD(drm_rbln_client, idle_ns, 32);
	EXPECT_FIELD(drm_rbln_client, creator_comm, 40);
	EXPECT_EQ(sizeof(drm_rbln_reclaim), 24u);
	EXPECT_FIELD(drm_rbln_reclaim, client_id, 0);
	EXPECT_FIELD(drm_rbln_reclaim, flags, 8);
	EXPECT_FIELD(drm_rbln_reclaim, reserved, 12);
	EXPECT_FIELD(drm_rbln_reclaim, freed_bytes, 16);
	EXPECT_EQ(sizeof(drm_rbln_device_status), 64u);
	EXPECT_FIELD(drm_rbln_device_status, flags, 0);
	EXPECT_FIELD(drm_rbln_device_status, status, 4);
	EXPECT_FIELD(drm_rbln_device_status, temperature_mc, 8);
	EXPECT_FIELD(drm_rbln_device_status, utilization, 12);
	EXPECT_FIELD(drm_rbln_device_status, power_uw, 16);
	EXPECT_FIELD(drm_rbln_device_status, pstate, 24);
	EXPECT_FIELD(drm_rbln_device_status, reserved, 28);
	EXPECT_FIELD(drm_rbln_device_status, memory_total, 32);
	EXPECT_FIELD(drm_rbln_device_status, memory_used, 40);
	EXPECT_FIELD(drm_rbln_device_status, memory_placed, 48);
	EXPECT_FIELD(drm_rbln_device_status, busy_ns, 56);
	EXPECT_EQ(sizeof(drm_rbln_reset), 8u);
	EXPECT_FIELD(drm_rbln_reset, flags, 0);
	EXPECT_FIELD(drm_rbln_reset, revoked, 4);
	EXPECT_EQ(sizeof(drm_rbln_list_clients), 24u);
	EXPECT_FIELD(drm_rbln_list_clients, flags, 0);
	EXPECT_FIELD(drm_rbln_list_clients, count, 4);
	EXPECT_FIELD(drm_rbln_list_clients, entries, 8);
	EXPECT_FIELD(drm_rbln_list_clients, entry_size, 16);
	EXPECT_FIELD(drm_rbln_list_clients, reserved, 20);
}

namespace {

// A name of the header, its value there and the value it was released with.
struct Pin {
	std::string name, value, frozen;
};

template <typename T>
	requires std::is_integral_v<T> || std::is_enum_v<T>
std::string text(T v)
{
	return std::to_string(uint64_t(v));
}
std::string text(const char *s) { return s; }

#define PIN(name, frozen) Pin{#name, text(name), text(frozen)}
#define SIZE(type, frozen) Pin{"struct " #type, text(sizeof(type)), text(frozen)}

const std::vector<Pin> &pins()
{
	static const std::vector<Pin> all = {
		PIN(DRM_RBLN_UAPI_VERSION, 16),
		PIN(DRM_RBLN_UAPI_COMPAT_VERSION, 1),
		PIN(DRM_RBLN_PCI_VENDOR_ID, 0x1eff),

		PIN(DRM_RBLN_GET_PARAM, 0x00),
		PIN(DRM_RBLN_DEVICE_INFO, 0x01),
		PIN(DRM_RBLN_BO_CREATE, 0x02),
		PIN(DRM_RBLN_BO_INFO, 0x03),
		PIN(DRM_RBLN_SUBMIT, 0x04),
		PIN(DRM_RBLN_WAIT, 0x05),
		PIN(DRM_RBLN_CLIENT_USAGE, 0x06),
		PIN(DRM_RBLN_ACQUIRE, 0x07),
		PIN(DRM_RBLN_RELEASE, 0x08),
		PIN(DRM_RBLN_LIST_CLIENTS, 0x09),
		PIN(DRM_RBLN_RECLAIM, 0x0a),
		PIN(DRM_RBLN_RESET, 0x0b),
		PIN(DRM_RBLN_DEVICE_STATUS, 0x0c),
		PIN(DRM_RBLN_SUBMIT_BATCH, 0x0d),
		PIN(DRM_RBLN_JOB_TIMES, 0x0e),
		PIN(DRM_IOCTL_RBLN_GET_PARAM, 0xc0186440),
		PIN(DRM_IOCTL_RBLN_DEVICE_INFO, 0xc0d86441),
		PIN(DRM_IOCTL_RBLN_BO_CREATE, 0xc0186442),
		PIN(DRM_IOCTL_RBLN_BO_INFO, 0xc0286443),
		// SUBMIT grew in interface 10 (48 -> 80 bytes) and 11 (88); the DRM
		// core dispatches by number and copies the caller's size, so
		// 0xc0306444 and 0xc0506444 of older binaries still work (the VM
		// test Sync.OldSubmitStructStillWorks).
		/* 0xc0586444 to 15: the size is part of the number, DRM matches the nr. */
		PIN(DRM_IOCTL_RBLN_SUBMIT, 0xc0786444),
		PIN(DRM_IOCTL_RBLN_WAIT, 0xc0186445),
		PIN(DRM_IOCTL_RBLN_CLIENT_USAGE, 0xc0486446),
		PIN(DRM_IOCTL_RBLN_ACQUIRE, 0xc0086447),
		PIN(DRM_IOCTL_RBLN_RELEASE, 0xc0086448),
		PIN(DRM_IOCTL_RBLN_LIST_CLIENTS, 0xc0186449),
		PIN(DRM_IOCTL_RBLN_RECLAIM, 0xc018644a),
		PIN(DRM_IOCTL_RBLN_RESET, 0xc008644b),
		PIN(DRM_IOCTL_RBLN_DEVICE_STATUS, 0xc040644c),
		PIN(DRM_IOCTL_RBLN_SUBMIT_BATCH, 0xc020644d),
		PIN(DRM_IOCTL_RBLN_JOB_TIMES, 0xc020644e),

		PIN(DRM_RBLN_SKU_UNKNOWN, 0),
		PIN(DRM_RBLN_SKU_ATOM, 1),
		PIN(DRM_RBLN_SKU_ATOM_MAX, 2),
		PIN(DRM_RBLN_SKU_REBEL100, 3),
		PIN(DRM_RBLN_SKU_EDU, 4),
		PIN(DRM_RBLN_STATUS_READY, 0),
		PIN(DRM_RBLN_STATUS_BUSY, 1),
		PIN(DRM_RBLN_STATUS_INIT, 2),
		PIN(DRM_RBLN_STATUS_FAULT, 3),
		PIN(DRM_RBLN_STATUS_FINISH, 4),
		PIN(DRM_RBLN_ENGINE_NEURAL_DMA, 0),
		PIN(DRM_RBLN_ENGINE_TASK_DMA, 1),
		PIN(DRM_RBLN_ENGINE_DEVICE_HDMA, 2),
		PIN(DRM_RBLN_ENGINE_EXTERNAL_HDMA, 3),
		PIN(DRM_RBLN_ENGINE_COUNT, 4),

		PIN(DRM_RBLN_CAP_SIMULATED, 1u << 0),
		PIN(DRM_RBLN_CAP_ACCEL_NODE, 1u << 1),
		PIN(DRM_RBLN_CAP_MEMORY, 1u << 2),
		PIN(DRM_RBLN_CAP_DMA, 1u << 3),
		PIN(DRM_RBLN_CAP_FDINFO, 1u << 4),
		PIN(DRM_RBLN_CAP_ACQUIRE, 1u << 5),
		PIN(DRM_RBLN_CAP_EVENTS, 1u << 6),
		PIN(DRM_RBLN_CAP_SYNCOBJ, 1u << 7),

		PIN(DRM_RBLN_PARAM_UAPI_VERSION, 0),
		PIN(DRM_RBLN_PARAM_UAPI_COMPAT_VERSION, 1),
		PIN(DRM_RBLN_PARAM_DEVICE_INDEX, 2),
		PIN(DRM_RBLN_PARAM_SKU, 3),
		PIN(DRM_RBLN_PARAM_PCI_DEVICE_ID, 4),
		PIN(DRM_RBLN_PARAM_CHIPLET_COUNT, 5),
		PIN(DRM_RBLN_PARAM_CAPABILITIES, 6),
		PIN(DRM_RBLN_PARAM_STATUS, 7),
		PIN(DRM_RBLN_PARAM_MEMORY_TOTAL, 8),
		PIN(DRM_RBLN_PARAM_MEMORY_USED, 9),
		PIN(DRM_RBLN_PARAM_ENGINE_MASK, 10),
		PIN(DRM_RBLN_PARAM_BUSY_NS, 11),
		PIN(DRM_RBLN_PARAM_MEMORY_PLACED, 12),
		PIN(DRM_RBLN_PARAM_JOB_MAX_BYTES, 13),
		PIN(DRM_RBLN_GET_PARAM_CHIPLET, 1u << 0),

		PIN(DRM_RBLN_BO_EAGER, 1u << 0),
		PIN(DRM_RBLN_BO_HOST, 1u << 1),
		PIN(DRM_RBLN_BO_CREATE_FLAGS, 0x3),
		PIN(DRM_RBLN_BO_PLACED, 1u << 31),
		PIN(DRM_RBLN_CHIPLET_INTERLEAVED, 0xffffffff),
		PIN(DRM_RBLN_HOST_BO_MAX, 1ull << 30),
		PIN(DRM_RBLN_MAX_COPIES, 4096),
		PIN(DRM_RBLN_LABEL_MAX, 64),
		PIN(DRM_RBLN_MAX_INFLIGHT, 256),
		PIN(DRM_RBLN_MAX_IN_SYNCS, 64),
		PIN(DRM_RBLN_SUBMIT_REPORT_END, 1u << 0),
		PIN(DRM_RBLN_SUBMIT_TIMES, 1u << 1),
		PIN(DRM_RBLN_SUBMIT_REPORT_TIMES, 1u << 2),
		PIN(DRM_RBLN_SUBMIT_FLAGS, 0x7),
		PIN(DRM_RBLN_JOB_TIME_RAN, 1u << 0),
		PIN(DRM_RBLN_JOB_TIME_TIMED_OUT, 1u << 1),
		PIN(DRM_RBLN_JOB_TIMES_RING, 4096),
		PIN(DRM_RBLN_MAX_BATCH, 64),

		PIN(DRM_RBLN_CLIENT_ACQUIRED, 1u << 0),
		PIN(DRM_RBLN_CLIENT_STALE, 1u << 1),
		PIN(DRM_RBLN_CLIENT_SELF, 1u << 2),
		PIN(DRM_RBLN_CLIENT_REVOKED, 1u << 3),
		PIN(DRM_RBLN_RECLAIM_FORCE, 1u << 0),
		PIN(DRM_RBLN_RESET_FORCE, 1u << 0),

		PIN(RBLN_GENL_NAME, "rbln"),
		PIN(RBLN_GENL_VERSION, 1),
		PIN(RBLN_GENL_MCGRP_EVENTS, "events"),
		PIN(RBLN_GENL_CMD_UNSPEC, 0),
		PIN(RBLN_GENL_CMD_EVENT, 1),
		PIN(RBLN_GENL_ATTR_UNSPEC, 0),
		PIN(RBLN_GENL_ATTR_PAD, 1),
		PIN(RBLN_GENL_ATTR_EVENT, 2),
		PIN(RBLN_GENL_ATTR_DEVICE, 3),
		PIN(RBLN_GENL_ATTR_CHIPLET, 4),
		PIN(RBLN_GENL_ATTR_ENGINE, 5),
		PIN(RBLN_GENL_ATTR_CLIENT, 6),
		PIN(RBLN_GENL_ATTR_PID, 7),
		PIN(RBLN_GENL_ATTR_BYTES, 8),
		PIN(RBLN_GENL_ATTR_MAX, 8),
		PIN(RBLN_GENL_EVENT_DEVICE_ADDED, 1),
		PIN(RBLN_GENL_EVENT_DEVICE_REMOVED, 2),
		PIN(RBLN_GENL_EVENT_ACQUIRED, 3),
		PIN(RBLN_GENL_EVENT_RELEASED, 4),
		PIN(RBLN_GENL_EVENT_RECLAIMED, 5),
		PIN(RBLN_GENL_EVENT_JOB_TIMEOUT, 6),
		PIN(RBLN_GENL_EVENT_FAULT, 7),
		PIN(RBLN_GENL_EVENT_MEMORY_ERROR, 8),
		PIN(RBLN_GENL_EVENT_RESET, 9),

		SIZE(drm_rbln_get_param, 24),
		SIZE(drm_rbln_device_info, 216),
		SIZE(drm_rbln_bo_create, 24),
		SIZE(drm_rbln_bo_info, 40),
		SIZE(drm_rbln_copy, 32),
		SIZE(drm_rbln_sync, 16),
		SIZE(drm_rbln_submit, 120),
		SIZE(drm_rbln_submit_batch, 32),
		SIZE(drm_rbln_wait, 24),
		SIZE(drm_rbln_client_usage, 72),
		SIZE(drm_rbln_acquire, 8),
		SIZE(drm_rbln_client, 56),
		SIZE(drm_rbln_list_clients, 24),
		SIZE(drm_rbln_reclaim, 24),
		SIZE(drm_rbln_device_status, 64),
		SIZE(drm_rbln_reset, 8),
		SIZE(drm_rbln_job_time, 48),
		SIZE(drm_rbln_job_times, 32),
	};
	return all;
}

// FNV-1a of every pin but the version itself, in name order.
uint64_t fingerprint()
{
	std::vector<Pin> sorted = pins();
	std::ranges::sort(sorted, {}, &Pin::name);
	uint64_t h = 0xcbf29ce484222325ull;
	for (const auto &p : sorted)
		if (p.name != "DRM_RBLN_UAPI_VERSION")
			for (char c : p.name + '=' + p.frozen + ';')
				h = (h ^ uint8_t(c)) * 0x100000001b3ull;
	return h;
}

// The fingerprint of each released interface.  A released one never changes:
// whatever changes the pins is a new version, with a line of its own here.
constexpr struct {
	unsigned version;
	uint64_t fingerprint;
} kReleased[] = {
	{12, 0x7a9efb74d8579398},
	{13, 0x2cf4e484df932301},
	{14, 0x7dc38e3eb09ec4e3},	/* job times; per-user limits (said in the text) */
	{15, 0xcf65c352b44d79f2},	/* NPUs on PCI: SKU_EDU, DEVICE_INFO's PCI link */
	{16, 0x6e2fb5a30d7afaff},	/* SUBMIT_REPORT_TIMES: submit grows to 120 */
};

} // namespace

TEST(UapiAbi, EveryConstantHasItsReleasedValue)
{
	for (const auto &p : pins())
		EXPECT_EQ(p.value, p.frozen) << p.name;
}

// A name of the header not pinned above would escape the freeze.
TEST(UapiAbi, EveryNameOfTheHeaderIsPinned)
{
	std::ifstream in(RBLN_UAPI_HEADER);
	ASSERT_TRUE(in) << RBLN_UAPI_HEADER;
	std::stringstream text;
	text << in.rdbuf();
	const std::string header = text.str();
	const std::regex name(R"(^#define\s+((?:DRM_RBLN|DRM_IOCTL_RBLN|RBLN_GENL)_\w+))"
			      R"(|^\s+((?:DRM_RBLN|RBLN_GENL)_\w+)\s*[=,])"
			      R"(|^struct (drm_rbln_\w+) \{)", std::regex::multiline);
	std::set<std::string> pinned;
	for (const auto &p : pins())
		pinned.insert(p.name);
	size_t found = 0;
	for (std::sregex_iterator m(header.begin(), header.end(), name), end; m != end; ++m, ++found) {
		const std::string n = (*m)[1].matched ? (*m)[1] : (*m)[2].matched ? (*m)[2] : "struct " + (*m)[3].str();
		EXPECT_TRUE(pinned.contains(n)) << n << " is not pinned here: freeze it, and give it a new interface version";
	}
	EXPECT_EQ(found, pinned.size()) << "pins of names the header no longer has";
}

// A forgotten version bump: the pins changed but DRM_RBLN_UAPI_VERSION did not.
TEST(UapiAbi, TheInterfaceIsTheReleasedOneOfItsVersion)
{
	const auto *r = std::ranges::find(kReleased, unsigned{DRM_RBLN_UAPI_VERSION}, [](const auto &e) { return e.version; });
	ASSERT_NE(r, std::end(kReleased)) << "version " << DRM_RBLN_UAPI_VERSION << " has no line in kReleased; it is "
					  << std::hex << "0x" << fingerprint();
	EXPECT_EQ(fingerprint(), r->fingerprint) << std::hex << "0x" << fingerprint()
						 << ": the interface differs from the released version " << std::dec
						 << r->version << ": bump DRM_RBLN_UAPI_VERSION";
}
