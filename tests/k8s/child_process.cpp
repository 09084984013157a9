// SPDX-License-Identifier: MIT
#include "child_process.hpp"

#include <csignal>
#include <cstdlib>

#include <spawn.h>
#include <sys/wait.h>

#include <fmt/format.h>

extern char **environ;

namespace rbln::test {

std::string build_dir()
{
	const char *build = std::getenv("RBLN_BUILD");
	const char *top = std::getenv("RBLN_TOP");
	return build ? build : fmt::format("{}/build", top ? top : ".");
}

pid_t spawn(const std::vector<std::string> &args)
{
	std::vector<char *> argv;
	for (const auto &a : args)
		argv.push_back(const_cast<char *>(a.c_str()));
	argv.push_back(nullptr);
	pid_t pid;
	return ::posix_spawn(&pid, argv[0], nullptr, nullptr, argv.data(), environ) == 0 ? pid : -1;
}

int terminate(pid_t pid)
{
	::kill(pid, SIGTERM);
	int status = 0;
	::waitpid(pid, &status, 0);
	return status;
}

} // namespace rbln::test
