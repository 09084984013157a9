// The kernel series the project tests the driver on (tests/vm/kernels.txt,
// compiled in), and which of them a kernel release belongs to.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

namespace rbln::smi {

// {"series": ["6.1", ...], "this_kernel": "<series of release>" or null}
nlohmann::json tested_kernels(const std::string &release);

} // namespace rbln::smi
