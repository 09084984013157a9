// SPDX-License-Identifier: MIT
// The exporter's metric families from a scrape's samples: names, types,
// labels, units.
#include <gtest/gtest.h>
#include <prometheus/text_serializer.h>

#include "metrics.hpp"

using namespace rbln::exporter;

namespace {

NpuSample rebel(std::optional<PodRef> pod = std::nullopt)
{
	return {1, "uuid-b", "RBLN-CR03", "0.5.0", "1.0.0-sim", "FAULT", 41.5, 60.25, 30, 4096, 1 << 30, 2, 1, 3,
		{{0, 4096, 1 << 28, {{"neural_dma", 1500000000}}, 3, false}, {1, 0, 1 << 28, {}, 0, true}},
		std::move(pod), std::nullopt};
}

std::string exposition(const std::vector<NpuSample> &npus, const std::map<unsigned, uint64_t> &errors = {})
{
	return prometheus::TextSerializer().Serialize(to_metric_families(npus, errors));
}

} // namespace

TEST(ExporterMetrics, VendorNamesUnitsAndLabels)
{
	const auto text = exposition({rebel()});
	const std::string labels = R"(npu="1",uuid="uuid-b",name="RBLN-CR03",driver_version="0.5.0",firmware_version="1.0.0-sim")";
	for (const auto &line : {"rbln_npu_temperature{" + labels + "} 41.5", "rbln_npu_power{" + labels + "} 60.25",
				 "rbln_npu_memory_used{" + labels + "} 4096",
				 "rbln_npu_memory_total{" + labels + "} 1073741824",
				 "rbln_npu_utilization{" + labels + "} 30", "rbln_npu_health{" + labels + "} 0",
				 "rbln_npu_chiplet_memory_used{" + labels + ",chiplet=\"0\"} 4096",
				 "rbln_npu_engine_busy_seconds_total{" + labels + ",chiplet=\"0\",engine=\"neural_dma\"} 1.5",
				 std::string("# TYPE rbln_npu_engine_busy_seconds_total counter"),
				 std::string("# TYPE rbln_npu_temperature gauge")})
		EXPECT_NE(text.find(line + "\n"), std::string::npos) << line << " not in:\n" << text;
	EXPECT_EQ(text.find("pod="), std::string::npos);
}

TEST(ExporterMetrics, PodLabelsWhenAttributed)
{
	const auto text = exposition({rebel(PodRef{"trainer-0", "ml", "main"})});
	EXPECT_NE(text.find(R"(firmware_version="1.0.0-sim",pod="trainer-0",namespace="ml",container="main"} 41.5)"),
		  std::string::npos) << text;
}

TEST(ExporterMetrics, CountersAndChipletStatus)
{
	const auto text = exposition({rebel()});
	const std::string labels = R"(npu="1",uuid="uuid-b",name="RBLN-CR03",driver_version="0.5.0",firmware_version="1.0.0-sim")";
	for (const auto &line : {"rbln_npu_up{" + labels + "} 1", "rbln_npu_faults_total{" + labels + "} 2",
				 "rbln_npu_memory_errors_total{" + labels + "} 1",
				 "rbln_npu_engine_resets_total{" + labels + "} 3",
				 "rbln_npu_chiplet_up{" + labels + ",chiplet=\"0\"} 1",
				 "rbln_npu_chiplet_up{" + labels + ",chiplet=\"1\"} 0",
				 "rbln_npu_chiplet_engine_resets_total{" + labels + ",chiplet=\"0\"} 3",
				 std::string("# TYPE rbln_npu_faults_total counter")})
		EXPECT_NE(text.find(line + "\n"), std::string::npos) << line << " not in:\n" << text;
}

// A lost chiplet makes the NPU unhealthy even before its status says FAULT.
TEST(ExporterMetrics, ALostChipletIsUnhealthy)
{
	auto health = [](const std::string &text) {
		const auto at = text.find("rbln_npu_health{");
		return at == std::string::npos ? std::string("missing")
					       : text.substr(text.find('}', at) + 2, text.find('\n', at) - text.find('}', at) - 2);
	};
	auto n = rebel();
	n.status = "READY";
	EXPECT_EQ(health(exposition({n})), "0") << "chiplet 1 is lost";
	n.chiplets[1].lost = false;
	EXPECT_EQ(health(exposition({n})), "1");
}

// An NPU whose figures cannot be read stays, as rbln_npu_up 0 with the
// reason, and counts as a scrape error; it has no figures of this scrape.
TEST(ExporterMetrics, AnUnreadableNpuIsDownWithItsReason)
{
	auto n = rebel();
	n.error = "status unreadable";
	const auto text = exposition({n}, {{1, 4}});
	EXPECT_NE(text.find(R"(rbln_npu_up{npu="1",uuid="uuid-b",name="RBLN-CR03",driver_version="0.5.0",firmware_version="1.0.0-sim",reason="status unreadable"} 0)"),
		  std::string::npos) << text;
	EXPECT_NE(text.find("rbln_exporter_scrape_errors_total{npu=\"1\"} 4\n"), std::string::npos) << text;
	EXPECT_EQ(text.find("rbln_npu_temperature{"), std::string::npos) << text;
}
