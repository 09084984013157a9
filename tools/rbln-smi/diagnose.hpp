// rbln-smi diagnose: an environment report that works without the driver or
// the shared library, recording every missing item as null.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace rbln::smi {

nlohmann::json diagnose_report();
std::string diagnose_text(const nlohmann::json &report);

// "path: old -> new" for each difference between two reports; "" if none.
std::string diagnose_diff(const nlohmann::json &a, const nlohmann::json &b);

} // namespace rbln::smi
