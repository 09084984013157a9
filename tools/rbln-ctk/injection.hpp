// SPDX-License-Identifier: MIT
// What a container needs besides the nodes to use its NPUs: librbln_devmgr.so.0
// and rbln-smi, their libraries outside glibc, and a createContainer hook that
// runs ldconfig in the container so the loader finds them.  The image brings
// glibc only.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace rbln::ctk {

using json = nlohmann::json;

struct InjectionOptions {
	std::string library;		// host librbln_devmgr.so.0; empty: installed, else the loader's
	std::string smi;		// host rbln-smi; empty: installed, else from PATH
	std::string ctk;		// rbln-ctk the hook runs; empty: this program
};

// Where the files appear in the container: where `make install` puts them.
std::string container_library_dir();		// e.g. /usr/lib/x86_64-linux-gnu
std::string container_smi_path();		// e.g. /usr/bin/rbln-smi
std::string container_deps_dir();		// their libraries: <library dir>/rbln

// CDI containerEdits with a read-only mount of each file and the ldcache
// hook.  What cannot be found is left out, with a line in @warnings.
json injection_edits(const InjectionOptions &opt, std::vector<std::string> &warnings);

// The shared libraries @file needs, transitively, resolved as the dynamic
// loader resolves them here, glibc's own left out: soname -> host path.
std::vector<std::pair<std::string, std::string>> library_dependencies(const std::string &file);

} // namespace rbln::ctk
