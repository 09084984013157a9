// The ways rbln-smi prints a snapshot.
#pragma once

#include <string>
#include <vector>

#include "options.hpp"
#include "snapshot.hpp"

namespace rbln::smi {

// The boxed Device Information and Context Information tables (78 columns);
// with @full, each device's chiplets too.
std::string render_table(const Snapshot &snap, bool full);
// JSON, schema_version 1: see docs/rbln-smi.md.
std::string render_json(const Snapshot &snap);
// -j --json-format vendor: the keys and types of the vendor's rbln-smi -j.
std::string render_vendor_json(const Snapshot &snap);
// --query: one line per NPU, fields quoted per RFC 4180 where they need it,
// separated by ", " as nvidia-smi's (a reader skips the space after a comma).
std::string render_csv(const Snapshot &snap, const std::vector<std::string> &fields, CsvFormat format);
// --query -j: an array with one object of those fields per NPU, typed.
std::string render_query_json(const Snapshot &snap, const std::vector<std::string> &fields);

// dmon: a header (with @header) and one line per NPU, after the date and/or
// time of the snapshot when asked (dmon -o D/T).
struct DmonColumns {
	bool date = false, time = false;
};
std::string render_dmon(const Snapshot &snap, bool header, DmonColumns columns = {});

// "0 / 64 MiB", "1.5 / 15.7 GiB": one unit per field, picked by the total.
std::string memory_text(uint64_t used, uint64_t total);

} // namespace rbln::smi
