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
	return {1, "uuid-b", "RBLN-CR03", "0.5.0", "1.0.0-sim", "FAULT", 41.5, 60.25, 30, 4096, 1 << 30,
		{{0, 4096, 1 << 28, {{"neural_dma", 1500000000}}}}, std::move(pod)};
}

std::string exposition(const std::vector<NpuSample> &npus)
{
	return prometheus::TextSerializer().Serialize(to_metric_families(npus));
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
