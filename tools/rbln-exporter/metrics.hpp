// SPDX-License-Identifier: MIT
// The exporter's metrics, with the vendor's names, from a scrape's samples.
#pragma once

#include <cstdint>
#include <map>
#include <vector>

#include <prometheus/metric_family.h>

#include "sample.hpp"

namespace rbln::exporter {

// @scrape_errors: failed NPU reads since the exporter started, by NPU
// (rbln_exporter_scrape_errors_total).
std::vector<prometheus::MetricFamily> to_metric_families(const std::vector<NpuSample> &npus,
							 const std::map<unsigned, uint64_t> &scrape_errors = {});

} // namespace rbln::exporter
