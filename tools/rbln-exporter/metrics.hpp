// SPDX-License-Identifier: MIT
// The exporter's metrics, with the vendor's names, from a scrape's samples.
#pragma once

#include <vector>

#include <prometheus/metric_family.h>

#include "sample.hpp"

namespace rbln::exporter {

std::vector<prometheus::MetricFamily> to_metric_families(const std::vector<NpuSample> &npus);

} // namespace rbln::exporter
