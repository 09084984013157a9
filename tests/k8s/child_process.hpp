// SPDX-License-Identifier: MIT
// The programs under test, run as the tests' children.
#pragma once

#include <string>
#include <vector>

#include <sys/types.h>

namespace rbln::test {

// $RBLN_BUILD, else $RBLN_TOP/build (set by tests/vm/suite.sh).
std::string build_dir();
// Starts @argv (argv[0] a path); -1 if it could not.
pid_t spawn(const std::vector<std::string> &argv);
// The same with its stderr appended to @stderr_path.
pid_t spawn(const std::vector<std::string> &argv, const std::string &stderr_path);
// SIGTERM, then its exit status as waitpid() gives it.
int terminate(pid_t pid);

} // namespace rbln::test
