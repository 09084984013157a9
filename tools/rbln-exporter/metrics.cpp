// SPDX-License-Identifier: MIT
#include "metrics.hpp"

#include <algorithm>
#include <functional>

namespace rbln::exporter {

namespace {

using prometheus::ClientMetric;
using prometheus::MetricFamily;
using prometheus::MetricType;
using Labels = std::vector<ClientMetric::Label>;

Labels npu_labels(const NpuSample &n)
{
	Labels l = {{"npu", std::to_string(n.index)}, {"uuid", n.uuid}, {"name", n.name},
		    {"driver_version", n.driver_version}, {"firmware_version", n.firmware_version}};
	if (n.pod) {
		l.push_back({"pod", n.pod->pod});
		l.push_back({"namespace", n.pod->ns});
		l.push_back({"container", n.pod->container});
	}
	return l;
}

ClientMetric value(Labels labels, MetricType type, double v)
{
	ClientMetric m;
	m.label = std::move(labels);
	if (type == MetricType::Counter)
		m.counter.value = v;
	else if (type == MetricType::Untyped)
		m.untyped.value = v;
	else
		m.gauge.value = v;
	return m;
}

// The vendor's capacity metrics end in _total, which Prometheus keeps for
// counters (promtool flags a gauge so named).  Untyped keeps the names users
// query and passes the lint; PromQL treats untyped samples as gauges.
constexpr MetricType kCapacity = MetricType::Untyped;

// A family with one series per NPU whose figures were read.
MetricFamily per_npu(const std::vector<NpuSample> &npus, const char *name, const char *help,
		     const std::function<double(const NpuSample &)> &get, MetricType type = MetricType::Gauge)
{
	MetricFamily f{name, help, type, {}};
	for (const auto &n : npus)
		if (!n.error)
			f.metric.push_back(value(npu_labels(n), type, get(n)));
	return f;
}

// Every NPU sysfs shows: 1 when its figures were read, else 0 with why.
MetricFamily up(const std::vector<NpuSample> &npus)
{
	MetricFamily f{"rbln_npu_up", "1 when the NPU's figures were read at this scrape; 0 (with reason) when not.",
		       MetricType::Gauge, {}};
	for (const auto &n : npus) {
		auto labels = npu_labels(n);
		if (n.error)
			labels.push_back({"reason", *n.error});
		f.metric.push_back(value(labels, MetricType::Gauge, n.error ? 0 : 1));
	}
	return f;
}

} // namespace

std::vector<MetricFamily> to_metric_families(const std::vector<NpuSample> &npus,
					     const std::map<unsigned, uint64_t> &scrape_errors)
{
	std::vector<MetricFamily> out = {
		up(npus),
		per_npu(npus, "rbln_npu_temperature", "NPU temperature in degrees Celsius.",
			[](const NpuSample &n) { return n.temperature_c; }),
		per_npu(npus, "rbln_npu_power", "NPU power draw in watts.",
			[](const NpuSample &n) { return n.power_w; }),
		per_npu(npus, "rbln_npu_memory_used", "Device memory taken by buffers, in bytes.",
			[](const NpuSample &n) { return double(n.memory_used); }),
		per_npu(npus, "rbln_npu_memory_total", "Device memory, in bytes.",
			[](const NpuSample &n) { return double(n.memory_total); }, kCapacity),
		per_npu(npus, "rbln_npu_utilization", "Percent of the last sampling window the NPU was busy.",
			[](const NpuSample &n) { return double(n.utilization); }),
		per_npu(npus, "rbln_npu_health", "1 when the NPU is usable, 0 when it has faulted (needs a reset).",
			[](const NpuSample &n) {
				return n.status == "FAULT" || std::ranges::any_of(n.chiplets, &ChipletSample::lost) ? 0.0 : 1.0;
			}),
		per_npu(npus, "rbln_npu_faults_total", "Times the NPU's status became FAULT.",
			[](const NpuSample &n) { return double(n.faults); }, MetricType::Counter),
		per_npu(npus, "rbln_npu_memory_errors_total", "Uncorrectable memory errors the NPU reported.",
			[](const NpuSample &n) { return double(n.memory_errors); }, MetricType::Counter),
		per_npu(npus, "rbln_npu_engine_resets_total",
			"Jobs that timed out on a hung engine (TDR), each followed by the engine's reset.",
			[](const NpuSample &n) { return double(n.engine_resets); }, MetricType::Counter),
	};
	MetricFamily errors{"rbln_exporter_scrape_errors_total", "NPU reads that failed since the exporter started.",
			    MetricType::Counter, {}};
	for (const auto &[npu, count] : scrape_errors)
		errors.metric.push_back(value({{"npu", std::to_string(npu)}}, MetricType::Counter, double(count)));
	if (!errors.metric.empty())
		out.push_back(std::move(errors));
	MetricFamily chiplet_up{"rbln_npu_chiplet_up", "1 while the chiplet works, 0 once the hardware reported it lost.",
				MetricType::Gauge, {}};
	MetricFamily chiplet_resets{"rbln_npu_chiplet_engine_resets_total",
				    "Engine resets after hung jobs on one chiplet.", MetricType::Counter, {}};
	MetricFamily used{"rbln_npu_chiplet_memory_used", "Device memory taken on one chiplet, in bytes.",
			  MetricType::Gauge, {}};
	MetricFamily total{"rbln_npu_chiplet_memory_total", "Device memory of one chiplet, in bytes.",
			   kCapacity, {}};
	MetricFamily busy{"rbln_npu_engine_busy_seconds_total", "Seconds an engine of a chiplet spent running jobs.",
			  MetricType::Counter, {}};
	for (const auto &n : npus)
		for (const auto &c : n.chiplets) {
			auto labels = npu_labels(n);
			labels.push_back({"chiplet", std::to_string(c.id)});
			used.metric.push_back(value(labels, MetricType::Gauge, double(c.memory_used)));
			total.metric.push_back(value(labels, kCapacity, double(c.memory_total)));
			chiplet_up.metric.push_back(value(labels, MetricType::Gauge, c.lost ? 0 : 1));
			chiplet_resets.metric.push_back(value(labels, MetricType::Counter, double(c.engine_resets)));
			for (const auto &e : c.engines) {
				auto with_engine = labels;
				with_engine.push_back({"engine", e.name});
				busy.metric.push_back(value(with_engine, MetricType::Counter, double(e.busy_ns) / 1e9));
			}
		}
	out.push_back(std::move(used));
	out.push_back(std::move(total));
	out.push_back(std::move(busy));
	out.push_back(std::move(chiplet_up));
	out.push_back(std::move(chiplet_resets));
	return out;
}

} // namespace rbln::exporter
