// SPDX-License-Identifier: MIT
// Grouping physical NPUs into the logical devices a process uses, from
//
//   RBLN_VISIBLE_DEVICES   which NPUs this process may use: host indices or
//                          uuids, comma-separated, in the order given; "all"
//                          (as unset); "none" or "void": none.  Set but
//                          empty: none (with a warning).  The container
//                          runtime uses this same parser and rewrites the
//                          variable to the NPUs it gave (docs/rbln-smi.md).
//   RBLN_DEVICES           deprecated alias; RBLN_VISIBLE_DEVICES wins.
//   RBLN_NPUS_PER_DEVICE   group size, 1, 2, 4, 8, 16 or 32: consecutive
//                          visible NPUs form a logical device.
//   RBLN_DEVICE_MAP        explicit groups, "[0,1],[2,3,4,5]"; ids count the
//                          visible NPUs from 0 in RBLN_VISIBLE_DEVICES order.
//
// Priority: RBLN_DEVICE_MAP, then RBLN_NPUS_PER_DEVICE, then one NPU per
// logical device.  NPUs no group takes are reported unused, with a warning.
// make_plan() throws rbln::Error (Errc::invalid_argument) naming the
// variable, the position or value and what is valid; plan_or_warning() never
// throws, for the query functions runtimes expose.
#pragma once

#include "abi_namespace.hpp"

#include <optional>
#include <string>
#include <vector>

#include "devmgr.hpp"

#pragma GCC visibility push(default)
RBLN_CXX_ABI_BEGIN

struct PhysicalNpu {
	unsigned index;		// host NPU number (N of /dev/rblnN)
	std::string uuid;
};

// The variables, as set (nullopt: unset).
struct GroupingEnv {
	std::optional<std::string> visible_devices, devices, npus_per_device, device_map;
	static GroupingEnv from_process();
};

struct LogicalDevice {
	unsigned id;
	std::vector<unsigned> npus;	// host NPU indices
};

struct Plan {
	std::vector<LogicalDevice> devices;
	std::vector<unsigned> unused;	// visible NPUs in no group, host indices
	std::vector<std::string> warnings;
};

// The NPUs an RBLN_VISIBLE_DEVICES-style @value names (@var is the variable's
// name, for messages), in the order given: host indices or uuids separated by
// commas, "all" (every NPU of @host), "none" or "void" (none).  Empty: none,
// with a warning.  Throws rbln::Error (invalid_argument)
// naming the variable and the bad entry.  Also used by the container runtime.
std::vector<PhysicalNpu> parse_visible_devices(const std::vector<PhysicalNpu> &host,
					       const std::string &var, const std::string &value,
					       std::vector<std::string> &warnings);

// host: the NPUs on this host in index order.
Plan make_plan(const std::vector<PhysicalNpu> &host, const GroupingEnv &env);

// Never throws: on a configuration error, an empty plan whose warnings carry
// the message (the full error comes from make_plan() at first use).
Plan plan_or_warning(const std::vector<PhysicalNpu> &host, const GroupingEnv &env);

// "Logical Device | Physical NPU IDs | Status" table of a plan.
std::string format_plan(const Plan &plan);

RBLN_CXX_ABI_END // namespace rbln
#pragma GCC visibility pop
