// The C ABI can grow: this test and the library are built with
// RBLN_DEVMGR_ABI_TEST_GROWTH, which adds a field to every versioned struct
// the library fills (rbln_job_desc, which it reads, is checked as input).  An old client built against the frozen
// first header (devmgr_v0.h) must still get its fields and nothing past them;
// a newer client's larger struct gets its tail zeroed.  Runs in the VM.
#include <cstddef>
#include <cstring>
#include <string>

#include <gtest/gtest.h>

#include "old_client.h"
#include "rbln/devmgr.h"

#ifndef RBLN_DEVMGR_ABI_TEST_GROWTH
#error "this test must see the grown structs"
#endif

namespace {

constexpr uint64_t kGrownMarker = 0x600df1e1d;	// what the grown library puts in the field

rbln_device_info grown_info(rbln_device *dev)
{
	rbln_device_info info{};
	info.struct_size = sizeof(info);
	EXPECT_EQ(rbln_device_get_info(dev, &info), RBLN_OK) << rbln_last_error();
	return info;
}

TEST(AbiGrowth, TheTestBuildReallyGrewTheStructs)
{
	old_client_view old{};
	old_client_run(0, &old);
	EXPECT_GT(sizeof(rbln_device_info), old.info_size);

	rbln_device *dev = nullptr;
	ASSERT_EQ(rbln_device_open(0, &dev), RBLN_OK) << rbln_last_error();
	EXPECT_EQ(grown_info(dev).grown, kGrownMarker);
	rbln_device_close(dev);
}

TEST(AbiGrowth, AnOldClientGetsItsFieldsAndNothingPastThem)
{
	old_client_view old{};
	old_client_run(0, &old);
	ASSERT_EQ(old.info_status, RBLN_OK);
	ASSERT_EQ(old.npu_status, RBLN_OK);
	ASSERT_EQ(old.clients_status, RBLN_OK);
	EXPECT_TRUE(old.canaries_intact) << "the library wrote past an old client's struct";

	rbln_device *dev = nullptr;
	ASSERT_EQ(rbln_device_open(0, &dev), RBLN_OK) << rbln_last_error();
	rbln_device_info now = grown_info(dev);
	rbln_device_close(dev);
	EXPECT_EQ(old.index, 0u);
	EXPECT_STREQ(old.name, now.name);
	EXPECT_STREQ(old.uuid, now.uuid);
	EXPECT_STREQ(old.pci_bus_id, now.pci_bus_id);
	EXPECT_EQ(std::string(old.npu_uuid).size(), 36u);

	// Two clients of its own, walked with the old element size.
	EXPECT_GE(old.client_count, 2u);
	EXPECT_NE(old.client_ids[0], 0u);
	EXPECT_NE(old.client_ids[1], 0u);
	EXPECT_NE(old.client_ids[0], old.client_ids[1]);

	// Its 40-byte copies, through rbln_submit@RBLN_DEVMGR_0, moved the bytes.
	EXPECT_EQ(old.submit_status, RBLN_OK);
	EXPECT_EQ(old.wait_status, RBLN_OK);
	EXPECT_TRUE(old.copied_intact) << "the old layout's copies were misread";
}

// rbln_copy carries its size: an element of the first sized layout (no
// `grown`) is taken, a newer one's zero tail is taken, a set one refused, and
// every element must state the same size.
TEST(AbiGrowth, CopiesOfOlderAndNewerCallers)
{
	rbln_device *dev = nullptr;
	ASSERT_EQ(rbln_device_open(0, &dev), RBLN_OK) << rbln_last_error();
	rbln_buffer *host = nullptr, *vram = nullptr;
	ASSERT_EQ(rbln_buffer_alloc(dev, 8192, 0, RBLN_ALLOC_HOST, &host), RBLN_OK) << rbln_last_error();
	ASSERT_EQ(rbln_buffer_alloc(dev, 8192, 0, 0, &vram), RBLN_OK) << rbln_last_error();
	struct Newer {
		rbln_copy c;
		uint64_t later;
	};
	Newer copies[2]{};
	auto submit = [&](size_t stride, size_t second_size, uint64_t later) {
		std::memset(copies, 0, sizeof(copies));
		auto *raw = reinterpret_cast<unsigned char *>(copies);
		for (size_t i = 0; i < 2; i++) {
			rbln_copy c{};	// grown's field zero
			c.struct_size = i ? second_size : stride;
			c.src = host, c.dst = vram;
			c.src_offset = c.dst_offset = 4096 * i;
			c.size = 4096;
			std::memcpy(raw + i * stride, &c, std::min(stride, sizeof(c)));
			if (stride == sizeof(Newer))
				std::memcpy(raw + i * stride + offsetof(Newer, later), &later, sizeof(later));
		}
		rbln_job *job = nullptr;
		rbln_status s = rbln_submit(dev, RBLN_ENGINE_EXTERNAL_HDMA, 0, &copies[0].c, 2, "sized", &job);
		if (job) {
			EXPECT_EQ(rbln_job_wait(job, 10'000'000'000), RBLN_OK) << rbln_last_error();
			rbln_job_free(job);
		}
		return s;
	};
	const size_t first = offsetof(rbln_copy, grown);	// the sized layout before this build grew it
	EXPECT_EQ(submit(first, first, 0), RBLN_OK) << "an older caller: " << rbln_last_error();
	EXPECT_EQ(submit(sizeof(rbln_copy), sizeof(rbln_copy), 0), RBLN_OK) << rbln_last_error();
	EXPECT_EQ(submit(sizeof(Newer), sizeof(Newer), 0), RBLN_OK) << "a newer caller's zero tail: "
								       << rbln_last_error();
	EXPECT_EQ(submit(sizeof(Newer), sizeof(Newer), 1), RBLN_ERR_INVALID_ARGUMENT);
	EXPECT_NE(std::string(rbln_last_error()).find("copies[0] sets fields this libdevmgr"),
		  std::string::npos) << rbln_last_error();
	EXPECT_EQ(submit(sizeof(rbln_copy), first, 0), RBLN_ERR_INVALID_ARGUMENT);
	EXPECT_EQ(std::string(rbln_last_error()),
		  "rbln_submit: copies[1].struct_size is " + std::to_string(first) + ", copies[0]'s is " +
			  std::to_string(sizeof(rbln_copy)));
	EXPECT_EQ(submit(sizeof(size_t), sizeof(size_t), 0), RBLN_ERR_INVALID_ARGUMENT);
	EXPECT_NE(std::string(rbln_last_error()).find("not the element size sizeof(rbln_copy)"),
		  std::string::npos) << rbln_last_error();
	rbln_buffer_free(host);
	rbln_buffer_free(vram);
	rbln_device_close(dev);
}

TEST(AbiGrowth, ANewerClientsTailIsZeroed)
{
	struct {
		rbln_device_info info;
		uint64_t later[2];	// fields a future header would add
	} newer;
	std::memset(&newer, 0xa5, sizeof(newer));
	newer.info.struct_size = sizeof(newer);

	rbln_device *dev = nullptr;
	ASSERT_EQ(rbln_device_open(0, &dev), RBLN_OK) << rbln_last_error();
	ASSERT_EQ(rbln_device_get_info(dev, &newer.info), RBLN_OK) << rbln_last_error();
	EXPECT_EQ(newer.info.struct_size, sizeof(newer)) << "struct_size is the caller's";
	EXPECT_EQ(newer.info.grown, kGrownMarker);
	EXPECT_EQ(newer.later[0], 0u);
	EXPECT_EQ(newer.later[1], 0u);

	// A newer client's client array is walked with its element size too.
	struct wide_client {
		rbln_client_info info;
		uint64_t later;
	} list[3];
	std::memset(list, 0xa5, sizeof(list));
	list[0].info.struct_size = sizeof(wide_client);
	size_t count = 0;
	ASSERT_EQ(rbln_device_clients(dev, &list[0].info, 3, &count), RBLN_OK) << rbln_last_error();
	ASSERT_GE(count, 1u);
	for (size_t i = 0; i < std::min<size_t>(count, 3); i++) {
		EXPECT_NE(list[i].info.client_id, 0u) << i;
		EXPECT_EQ(list[i].info.grown, kGrownMarker) << i;
		EXPECT_EQ(list[i].later, 0u) << i;
	}
	rbln_device_close(dev);
}

TEST(AbiGrowth, AStructSmallerThanItsFirstVersionIsRefused)
{
	rbln_device *dev = nullptr;
	ASSERT_EQ(rbln_device_open(0, &dev), RBLN_OK) << rbln_last_error();
	rbln_device_info info{};
	info.struct_size = offsetof(rbln_device_info, name);
	EXPECT_EQ(rbln_device_get_info(dev, &info), RBLN_ERR_INVALID_ARGUMENT);
	EXPECT_NE(std::string(rbln_last_error()).find("struct_size"), std::string::npos);
	rbln_device_close(dev);
}

// A struct as a newer caller has it: two fields a later header would add.
template <typename T>
struct Newer {
	T s;
	uint64_t later[2];
};

// One versioned struct through @call: a newer caller's gets the grown field
// and a zeroed tail; an older caller's (without the grown field) is written
// no further than its size; one below the first published size is refused.
template <typename T, typename Call>
void expect_growth(const char *what, Call call)
{
	SCOPED_TRACE(what);
	Newer<T> newer;
	std::memset(&newer, 0xa5, sizeof(newer));
	newer.s.struct_size = sizeof(newer);
	ASSERT_EQ(call(&newer.s), RBLN_OK) << rbln_last_error();
	EXPECT_EQ(newer.s.struct_size, sizeof(newer)) << "struct_size is the caller's";
	EXPECT_EQ(newer.s.grown, kGrownMarker);
	EXPECT_EQ(newer.later[0], 0u);
	EXPECT_EQ(newer.later[1], 0u);

	Newer<T> older;
	std::memset(&older, 0xa5, sizeof(older));
	older.s.struct_size = offsetof(T, grown);
	ASSERT_EQ(call(&older.s), RBLN_OK) << rbln_last_error();
	uint64_t untouched;
	std::memset(&untouched, 0xa5, sizeof(untouched));
	EXPECT_EQ(older.s.grown, untouched) << "written past an older caller's struct";

	T tiny{};
	tiny.struct_size = sizeof(size_t);
	EXPECT_EQ(call(&tiny), RBLN_ERR_INVALID_ARGUMENT);
}

} // namespace

TEST(AbiGrowth, EveryStructTheLibraryFills)
{
	rbln_device *dev = nullptr;
	ASSERT_EQ(rbln_device_open(0, &dev), RBLN_OK) << rbln_last_error();
	expect_growth<rbln_device_info>("rbln_device_info", [&](rbln_device_info *p) {
		return rbln_device_get_info(dev, p);
	});
	expect_growth<rbln_memory_usage>("rbln_memory_usage", [&](rbln_memory_usage *p) {
		return rbln_device_memory(dev, -1, p);
	});
	expect_growth<rbln_npu_info>("rbln_npu_info by position", [](rbln_npu_info *p) {
		return rbln_npu_get(0, p);
	});
	expect_growth<rbln_npu_info>("rbln_npu_info by spec", [](rbln_npu_info *p) {
		return rbln_npu_find("0", p);
	});
	expect_growth<rbln_device_status>("rbln_device_status by handle", [&](rbln_device_status *p) {
		return rbln_device_get_status(dev, p);
	});
	expect_growth<rbln_device_status>("rbln_device_status by spec", [](rbln_device_status *p) {
		return rbln_npu_get_status("0", p);
	});
	expect_growth<rbln_client_usage>("rbln_client_usage", [&](rbln_client_usage *p) {
		return rbln_device_usage(dev, p);
	});
	rbln_event_listener *listener = nullptr;
	ASSERT_EQ(rbln_event_listener_open(&listener), RBLN_OK) << rbln_last_error();
	expect_growth<rbln_event>("rbln_event", [&](rbln_event *p) {
		if (p->struct_size > sizeof(size_t) &&
		    (rbln_device_acquire(dev) != RBLN_OK || rbln_device_release(dev) != RBLN_OK))
			return RBLN_ERR_SYSTEM;
		return rbln_event_next(listener, 5000, p);
	});
	rbln_event_listener_close(listener);
	rbln_device_close(dev);
}

// Arrays: each element at the caller's element size, grown or not.
TEST(AbiGrowth, EngineFiguresArrays)
{
	Newer<rbln_engine_figures> newer[8];
	std::memset(newer, 0xa5, sizeof(newer));
	newer[0].s.struct_size = sizeof(newer[0]);
	size_t count = 0;
	ASSERT_EQ(rbln_npu_engines("0", &newer[0].s, 8, &count), RBLN_OK) << rbln_last_error();
	ASSERT_GE(count, 1u);
	for (size_t i = 0; i < std::min<size_t>(count, 8); i++) {
		EXPECT_EQ(newer[i].s.struct_size, sizeof(newer[0])) << i;
		EXPECT_EQ(newer[i].s.grown, kGrownMarker) << i;
		EXPECT_EQ(newer[i].later[0], 0u) << i;
	}
	Newer<rbln_engine_figures> tiny{};
	tiny.s.struct_size = sizeof(size_t);
	EXPECT_EQ(rbln_npu_engines("0", &tiny.s, 1, &count), RBLN_ERR_INVALID_ARGUMENT);
}

// rbln_job_desc is read: an older caller's is taken, a newer one's unknown
// fields are taken while zero and refused once set.
TEST(AbiGrowth, JobDescsOfOlderAndNewerCallers)
{
	rbln_device *dev = nullptr;
	ASSERT_EQ(rbln_device_open(0, &dev), RBLN_OK) << rbln_last_error();
	rbln_buffer *host = nullptr, *vram = nullptr;
	ASSERT_EQ(rbln_buffer_alloc(dev, 4096, 0, RBLN_ALLOC_HOST, &host), RBLN_OK) << rbln_last_error();
	ASSERT_EQ(rbln_buffer_alloc(dev, 4096, 0, 0, &vram), RBLN_OK) << rbln_last_error();
	rbln_copy copy{};
	copy.struct_size = sizeof(copy);
	copy.src = host, copy.dst = vram;
	copy.size = 4096;
	struct {
		rbln_job_desc d;
		uint64_t later;
	} desc;
	auto submit = [&](size_t size, uint64_t later) {
		std::memset(&desc, 0, sizeof(desc));
		desc.d.struct_size = size;
		desc.d.engine = RBLN_ENGINE_EXTERNAL_HDMA;
		desc.d.copies = &copy;
		desc.d.copy_count = 1;
		desc.later = later;
		rbln_job *job = nullptr;
		rbln_status s = rbln_submit_batch(dev, &desc.d, 1, &job, nullptr);
		if (job) {
			EXPECT_EQ(rbln_job_wait(job, 10'000'000'000), RBLN_OK) << rbln_last_error();
			rbln_job_free(job);
		}
		return s;
	};
	EXPECT_EQ(submit(sizeof(rbln_job_desc), 0), RBLN_OK) << rbln_last_error();
	EXPECT_EQ(submit(sizeof(desc), 0), RBLN_OK) << "a newer caller's zero fields: " << rbln_last_error();
	EXPECT_EQ(submit(sizeof(desc), 1), RBLN_ERR_INVALID_ARGUMENT);
	EXPECT_NE(std::string(rbln_last_error()).find("does not know"), std::string::npos) << rbln_last_error();
	EXPECT_EQ(submit(sizeof(size_t), 0), RBLN_ERR_INVALID_ARGUMENT);
	rbln_buffer_free(host);
	rbln_buffer_free(vram);
	rbln_device_close(dev);
}
