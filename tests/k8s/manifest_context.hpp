// SPDX-License-Identifier: MIT
// A container's security context as deploy/*.yaml ships it, and the command
// that runs a program under it in the test VM: the user, no_new_privs, the
// capabilities left (setpriv) and the read-only mounts (a private mount
// namespace, unshare).  Read from the manifest at test time, so the tests
// and what operators deploy cannot drift apart.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

namespace rbln::test {

struct ManifestContext {
	std::string file, container;
	bool privileged = false;
	std::optional<unsigned> run_as_user, run_as_group;	// none: the image's, root
	bool no_new_privs = false;			// allowPrivilegeEscalation: false
	bool drop_all = false;				// capabilities.drop: [ALL]
	std::vector<std::string> add;			// capabilities.add
	bool read_only_root = false;			// readOnlyRootFilesystem
	bool host_network = false;
	std::map<std::string, bool> mounts;		// mountPath -> readOnly
};

// deploy/@file's container @container (throws std::runtime_error naming
// what is missing).
ManifestContext manifest_context(const std::string &file, const std::string &container);

// @argv run under @ctx: the manifest's mount paths mapped to the test's own
// paths by @paths (a mount path not in it is the same path here; one that
// does not exist is skipped), read-only ones remounted read-only.
std::vector<std::string> under_context(const ManifestContext &ctx, const std::vector<std::string> &argv,
				       const std::map<std::string, std::string> &paths = {});

// @argv as one shell command line, each word quoted.
std::string shell_command(const std::vector<std::string> &argv);

} // namespace rbln::test
