// rbln-smi trace summary FILE: what a Perfetto trace of the profiler holds,
// as text: its tracks as Perfetto shows them (device, Chiplet 0..3, engines),
// slices and bytes per engine, failed slices, flows and counters.
#pragma once

#include <string>

namespace rbln::smi {

// Throws rbln::Error: not_found for a file that cannot be read,
// invalid_argument for one that is not a trace.
std::string summarize_trace(const std::string &path);

} // namespace rbln::smi
