// What the storm may not leave behind once all its processes are gone: an
// open file (client) on any device, or memory in use.  Looked at before
// anything settles the devices, since a forced RESET revokes a leaked client
// and frees what it holds, which would hide the leak.
#pragma once

#include <string>
#include <vector>

namespace storm {

// Every client still open (but the checker's own) and every device whose
// memory is not back to 0, one line each, naming the device and the client's
// id, creator and memory.  Files still closing may hold memory for a moment,
// so it polls for a while before it reports.
std::vector<std::string> leftovers();

}  // namespace storm
