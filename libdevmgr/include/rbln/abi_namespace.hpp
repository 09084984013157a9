// The C++ API's ABI generation.
//
// The C ABI (rbln/devmgr.h) grows by versioned structs and never breaks.  The
// C++ API cannot promise that: its types hold std::string and std::vector and
// callers compile in their layout.  So every C++ name lives in an inline
// namespace that names its generation.  Source using rbln::Device is unaffected,
// but the mangled names carry the generation (rbln::v1::Device), so a binary
// built against one generation fails to load against another with an undefined
// symbol, instead of running with the wrong layout.
//
// The rules (docs/libdevmgr-c.md, "C++ API"):
//   - adding a function, or a new type, stays in v1;
//   - changing a public type's members, size or a function's signature moves
//     every name to v2 (RBLN_CXX_ABI_NAMESPACE and RBLN_DEVMGR_CXX_1 in
//     rbln_devmgr.map both step).
// Runtimes that need a stable ABI across releases use the C ABI.
#pragma once

#define RBLN_CXX_ABI_NAMESPACE v1
#define RBLN_CXX_ABI_BEGIN                                                                          \
	namespace rbln {                                                                            \
	inline namespace v1 {
#define RBLN_CXX_ABI_END                                                                            \
	}                                                                                           \
	}
