#include "views.hpp"

#include <cmath>

#include <ctime>
#include <optional>

#include <nlohmann/json.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>

namespace rbln::smi {

namespace {

constexpr int kInner = 74;	// text width inside "| " and " |"

std::string rule()
{
	return "+" + std::string(kInner + 2, '-') + "+\n";
}

std::string row(const std::string &text)
{
	return fmt::format("| {:<{}} |\n", text.substr(0, kInner), kInner);
}

// Engine names short enough for an 80-column row; the full report has a legend.
std::string engine_abbrev(const std::string &engine)
{
	if (engine == "neural_dma") return "NDMA";
	if (engine == "task_dma") return "TDMA";
	if (engine == "device_hdma") return "DHDMA";
	if (engine == "external_hdma") return "EHDMA";
	return engine;
}

std::string state_text(const ClientInfo &c)
{
	std::vector<std::string> s;
	if (c.acquired)
		s.push_back("acquired");
	if (c.stale)
		s.push_back("STALE");
	if (c.revoked)
		s.push_back("revoked");
	return s.empty() ? "open" : fmt::format("{}", fmt::join(s, ","));
}

} // namespace

std::string memory_text(uint64_t used, uint64_t total)
{
	if (total < (1ull << 30))
		return fmt::format("{} / {} MiB", used >> 20, total >> 20);
	return fmt::format("{:.1f} / {:.1f} GiB", double(used) / double(1ull << 30),
			   double(total) / double(1ull << 30));
}

// "16.0 GT/s", or nullopt when the driver does not know the link.
static std::optional<std::string> link_speed_text(const PciLink &l)
{
	if (!l.speed_mts)
		return std::nullopt;
	return fmt::format("{:.1f} GT/s", l.speed_mts / 1000.0);
}

static nlohmann::json or_null(const std::optional<std::string> &s)
{
	return s ? nlohmann::json(*s) : nlohmann::json(nullptr);
}

static nlohmann::json or_null(uint32_t n)
{
	return n ? nlohmann::json(n) : nlohmann::json(nullptr);
}

// The PCI backend's board is QEMU's edu, and says so wherever it is listed.
static bool is_emulated_board(const DeviceSnapshot &d)
{
	return d.npu.name == "RBLN-EDU";
}

std::string render_table(const Snapshot &snap, bool full)
{
	std::string out = rule();
	std::string ver = "KMD ver: " + snap.driver_version;
	out += row(fmt::format("{:<{}}{}", "Device Information", kInner - ver.size(), ver));
	out += rule();
	out += row(fmt::format("{:>3} {:<9} {:<6} {:<12} {:>4} {:>6} {:>4} {:>18} {:>4}", "NPU", "Name",
			       "Device", "PCI BUS ID", "Temp", "Power", "Perf", "Memory(used/total)",
			       "Util"));
	out += rule();
	for (const auto &d : snap.devices) {
		out += row(fmt::format("{:>3} {:<9} {:<6} {:<12} {:>3}C {:>5.1f}W {:>4} {:>18} {:>3}%",
				       d.npu.index, d.npu.name, fmt::format("rbln{}", d.npu.index),
				       d.npu.pci_bus_id, d.temperature_c, d.power_w, d.pstate,
				       memory_text(d.memory_used, d.npu.memory_total), d.utilization));
		if (d.npu.status != "READY" && d.npu.status != "BUSY")
			out += row(fmt::format("    status {}", d.npu.status));
		if (is_emulated_board(d))
			out += row("    emulated: QEMU's edu board (PCI 1234:11e8), not Rebellions silicon");
		if (full)
			out += row(fmt::format("    PCI link {}", d.link.speed_mts
					       ? fmt::format("{} x{}", *link_speed_text(d.link), d.link.width)
					       : std::string("unknown")));
		if (full)
			for (const auto &c : d.chiplets) {
				std::vector<std::string> engines;
				std::string busy = "      busy";
				for (const auto &e : c.engines) {
					engines.push_back(engine_abbrev(e.name));
					busy += fmt::format("  {} {:.3f}s", engines.back(), e.busy_ns / 1e9);
				}
				out += row(fmt::format("    chiplet {}  {:>18}  {}{}", c.index,
						       memory_text(c.memory_used, c.memory_total),
						       fmt::join(engines, " "),
						       c.engine_resets ? fmt::format("  resets {}", c.engine_resets)
								       : std::string()));
				out += row(busy);
			}
	}
	if (full)
		out += row("    engines: NDMA Neural DMA, TDMA Task DMA, DHDMA Device HDMA,") +
		       row("             EHDMA External HDMA (host <-> device, chiplet 0 only)");
	if (snap.devices.empty())
		out += row("No NPU found");
	out += rule();

	out += row("Context Information");
	out += rule();
	out += row(fmt::format("{:>3} {:<15} {:>7} {:>7} {:>18} {}", "NPU", "Process", "PID",
			       "Client", "Memory", "State"));
	out += rule();
	for (const auto &c : snap.contexts) {
		uint64_t total = 0;
		for (const auto &d : snap.devices)
			if (d.npu.index == c.npu)
				total = d.npu.memory_total;
		out += row(fmt::format("{:>3} {:<15} {:>7} {:>7} {:>18} {}", c.npu, c.client.creator_comm,
				       c.client.creator_pid ? std::to_string(c.client.creator_pid) : "-",
				       c.client.client_id,
				       memory_text(c.client.device_memory, total).substr(0, 18),
				       state_text(c.client)));
	}
	if (snap.contexts.empty())
		out += row("No running processes found");
	out += rule();
	for (const auto &n : snap.notes)
		out += "note: " + n + "\n";
	return out;
}

std::string render_json(const Snapshot &snap)
{
	using nlohmann::json;
	json devices = json::array(), contexts = json::array();
	for (const auto &d : snap.devices) {
		json chiplets = json::array();
		for (const auto &c : d.chiplets) {
			json names = json::array(), busy = json::object();
			for (const auto &e : c.engines) {
				names.push_back(e.name);
				busy[e.name] = e.busy_ns;
			}
			chiplets.push_back({{"index", c.index},
					    {"memory", {{"total", c.memory_total}, {"used", c.memory_used},
							{"placed", c.memory_placed}}},
					    {"engines", names},
					    {"engine_busy_ns", busy},
					    {"engine_resets", c.engine_resets},
					    {"status", c.lost ? "lost" : "ok"}});
		}
		devices.push_back({
			{"npu", d.npu.index},
			{"name", d.npu.name},
			{"sku", d.npu.sku},
			{"uuid", d.npu.uuid},
			{"device", fmt::format("rbln{}", d.npu.index)},
			{"node", d.npu.node},
			{"status", d.npu.status},
			{"firmware_version", d.firmware_version},
			{"pci", {{"bus_id", d.npu.pci_bus_id}, {"numa_node", d.numa_node},
				 {"link_speed", or_null(link_speed_text(d.link))},
				 {"link_width", or_null(d.link.width)}}},
			{"emulated", is_emulated_board(d)},
			{"temperature_c", d.temperature_c},
			{"power_w", d.power_w},
			{"pstate", d.pstate},
			{"utilization_percent", d.utilization},
			{"memory", {{"total", d.npu.memory_total}, {"used", d.memory_used},
				    {"placed", d.memory_placed}}},
			{"chiplet_count", d.npu.chiplet_count},
			{"chiplets", chiplets},
			{"counters", {{"faults", d.counters.faults}, {"memory_errors", d.counters.memory_errors},
				      {"engine_resets", d.counters.engine_resets}}},
		});
	}
	for (const auto &c : snap.contexts)
		contexts.push_back({{"npu", c.npu},
				    {"client_id", c.client.client_id},
				    {"pid", c.client.creator_pid},
				    {"process", c.client.creator_comm},
				    {"uid", c.client.uid},
				    {"memory", c.client.device_memory},
				    {"acquired", c.client.acquired},
				    {"stale", c.client.stale},
				    {"revoked", c.client.revoked},
				    {"idle_ns", c.client.idle.count()}});
	json doc = {{"schema_version", 1},
		    {"driver_version", snap.driver_version},
		    {"devices", devices},
		    {"contexts", contexts},
		    {"notes", snap.notes}};
	return doc.dump(2) + "\n";
}

std::string render_vendor_json(const Snapshot &snap)
{
	using nlohmann::json;
	json devices = json::array(), contexts = json::array();
	for (const auto &d : snap.devices)
		devices.push_back({
			{"npu", d.npu.index},
			{"name", d.npu.name},
			{"uuid", d.npu.uuid},
			{"device", fmt::format("rbln{}", d.npu.index)},
			{"status", d.npu.status},
			{"fw_ver", d.firmware_version},
			// Simulated NPUs have no PCI link to report: null.
			{"pci", {{"bus_id", d.npu.pci_bus_id}, {"numa_node", d.numa_node},
				 {"link_speed", or_null(link_speed_text(d.link))},
				 {"link_width", d.link.width ? nlohmann::json(std::to_string(d.link.width))
							     : nlohmann::json(nullptr)}}},
			{"temperature", d.temperature_c},
			{"card_power", std::round(d.power_w * 10) / 10},
			{"pstate", d.pstate},
			// The vendor's types: bytes as decimal strings.
			{"memory", {{"used", std::to_string(d.memory_used)},
				    {"total", std::to_string(d.npu.memory_total)}}},
			{"util", d.utilization},
		});
	for (const auto &c : snap.contexts)
		contexts.push_back({{"ctx_id", c.client.client_id},
				    {"npu", c.npu},
				    {"pid", c.client.creator_pid},
				    {"cmd", c.client.creator_comm},
				    {"memory", std::to_string(c.client.device_memory)}});
	json doc = {{"KMD_version", snap.driver_version}, {"devices", devices}, {"contexts", contexts}};
	return doc.dump(2) + "\n";
}

std::string render_dmon(const Snapshot &snap, bool header, DmonColumns columns)
{
	// The optional leading columns, as nvidia-smi dmon -o D/T prints them.
	std::string names, units, lead;
	const time_t secs = std::chrono::system_clock::to_time_t(snap.taken);
	struct tm local {};
	localtime_r(&secs, &local);
	char text[16];
	if (columns.date) {
		names += "    Date ", units += "YYYYMMDD ";
		std::strftime(text, sizeof(text), "%Y%m%d", &local);
		lead += fmt::format("{:>8} ", text);
	}
	if (columns.time) {
		names += "    Time ", units += "HH:MM:SS ";
		std::strftime(text, sizeof(text), "%H:%M:%S", &local);
		lead += fmt::format("{:>8} ", text);
	}
	std::string out;
	if (header)
		out += fmt::format("# {}npu  temp  power pstate  util  mem_used mem_total status\n"
				   "# {}idx     C      W           %       MiB       MiB\n",
				   names, units);
	for (const auto &d : snap.devices)
		out += fmt::format("  {}{:>3} {:>5} {:>6.1f} {:>6} {:>5} {:>9} {:>9} {}\n", lead, d.npu.index,
				   d.temperature_c, d.power_w, d.pstate, d.utilization, d.memory_used >> 20,
				   d.npu.memory_total >> 20, d.npu.status);
	return out;
}

static nlohmann::json field_value(const Snapshot &snap, const DeviceSnapshot &d, const std::string &f)
{
	if (f == "npu") return d.npu.index;
	if (f == "timestamp") return timestamp_text(snap.taken);
	if (f == "name") return d.npu.name;
	if (f == "uuid") return d.npu.uuid;
	if (f == "pci.bus_id") return d.npu.pci_bus_id;
	if (f == "pci.link_speed") return or_null(link_speed_text(d.link));
	if (f == "pci.link_width") return or_null(d.link.width);
	if (f == "status") return d.npu.status;
	if (f == "temperature") return d.temperature_c;
	if (f == "power") return std::round(d.power_w * 10) / 10;
	if (f == "pstate") return d.pstate;
	if (f == "memory.used") return d.memory_used;
	if (f == "memory.total") return d.npu.memory_total;
	if (f == "utilization") return d.utilization;
	if (f == "driver_version") return snap.driver_version;
	return nullptr;
}

// RFC 4180: a field with a comma, quote or line break is quoted, its quotes
// doubled; so is one with a leading space, which the ", " separator's
// readers would drop.
static std::string csv_field(const std::string &value)
{
	if (value.find_first_of(",\"\r\n") == std::string::npos && !value.starts_with(' '))
		return value;
	std::string out = "\"";
	for (char c : value)
		out += c == '"' ? "\"\"" : std::string(1, c);
	return out + "\"";
}

std::string render_csv(const Snapshot &snap, const std::vector<std::string> &fields, CsvFormat format)
{
	std::string out;
	std::vector<std::string> cells;
	if (format.header) {
		for (const auto &f : fields)
			cells.push_back(csv_field(query_field_header(f)));
		out += fmt::format("{}\n", fmt::join(cells, ", "));
	}
	for (const auto &d : snap.devices) {
		cells.clear();
		for (const auto &f : fields) {
			auto v = field_value(snap, d, f);
			std::string text = v.is_string()	 ? v.get<std::string>()
					   : v.is_number_float() ? fmt::format("{:.1f}", v.get<double>())
								 : v.dump();
			std::string unit = query_field_unit(f);
			if (format.units && !unit.empty())
				text += " " + unit;
			cells.push_back(csv_field(text));
		}
		out += fmt::format("{}\n", fmt::join(cells, ", "));
	}
	return out;
}

std::string render_query_json(const Snapshot &snap, const std::vector<std::string> &fields)
{
	nlohmann::json devices = nlohmann::json::array();
	for (const auto &d : snap.devices) {
		nlohmann::json row = nlohmann::json::object();
		for (const auto &f : fields)
			row[f] = field_value(snap, d, f);
		devices.push_back(row);
	}
	// docs/rbln-smi-query.schema.json
	return nlohmann::json{{"schema_version", 1}, {"fields", fields}, {"devices", devices}}.dump(2) + "\n";
}

} // namespace rbln::smi
