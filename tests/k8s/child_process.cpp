// SPDX-License-Identifier: MIT
#include "child_process.hpp"

#include <csignal>
#include <cstdlib>

#include <fcntl.h>
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
	return spawn(args, "");
}

pid_t spawn(const std::vector<std::string> &args, const std::string &stderr_path)
{
	std::vector<char *> argv;
	for (const auto &a : args)
		argv.push_back(const_cast<char *>(a.c_str()));
	argv.push_back(nullptr);
	posix_spawn_file_actions_t actions;
	posix_spawn_file_actions_init(&actions);
	if (!stderr_path.empty())
		posix_spawn_file_actions_addopen(&actions, 2, stderr_path.c_str(), O_WRONLY | O_CREAT | O_APPEND, 0644);
	pid_t pid;
	int rc = ::posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), environ);
	posix_spawn_file_actions_destroy(&actions);
	return rc == 0 ? pid : -1;
}

int terminate(pid_t pid)
{
	::kill(pid, SIGTERM);
	int status = 0;
	::waitpid(pid, &status, 0);
	return status;
}

} // namespace rbln::test
