// SPDX-License-Identifier: MIT
// GetPreferredAllocation's choice: keep a pod's NPUs together.
#pragma once

#include <string>
#include <vector>

namespace rbln::k8s {

struct Candidate {
	std::string id;
	int numa_node;
	unsigned position;	// place in the host's PCI order (index order)
};

// @size devices of @available (which holds @must_include), chosen so that
// they span as few NUMA nodes as possible, then lie closest together in PCI
// order, then (for sizes 2, 4, 8, ...) start on a multiple of the size, so
// that the set is a natural RBLN_NPUS_PER_DEVICE group.  Returned in PCI
// order.  Fewer available than @size: all of them.
std::vector<std::string> preferred_allocation(std::vector<Candidate> available,
					      const std::vector<std::string> &must_include, size_t size);

} // namespace rbln::k8s
