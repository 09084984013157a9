// rbln-ctk's command line (CLI11): --help on every command, bad values and
// conflicting options refused with exit 2, naming what was wrong.
#include <array>
#include <cstdio>
#include <string>

#include <gtest/gtest.h>

namespace {

struct Result {
	int exit;
	std::string out;	// stdout and stderr
};

Result ctk(const std::string &args)
{
	std::string cmd = std::string(RBLN_TEST_CTK) + " " + args + " 2>&1";
	FILE *p = ::popen(cmd.c_str(), "r");
	Result r{-1, ""};
	std::array<char, 4096> buf;
	for (size_t n; (n = std::fread(buf.data(), 1, buf.size(), p)) > 0;)
		r.out.append(buf.data(), n);
	int status = ::pclose(p);
	r.exit = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
	return r;
}

} // namespace

TEST(CtkCli, HelpOnEveryCommand)
{
	for (const char *cmd : {"", "cdi", "cdi generate", "cdi list", "cdi validate", "hook", "hook update-ldcache",
				"runtime", "runtime configure", "info", "nfd"}) {
		auto r = ctk(std::string(cmd) + " --help");
		EXPECT_EQ(r.exit, 0) << cmd << ": " << r.out;
		EXPECT_NE(r.out.find(std::string("Usage: rbln-ctk") + (*cmd ? " " : "") + cmd), std::string::npos)
			<< cmd << ": " << r.out;
	}
}

TEST(CtkCli, BadArgumentsAreRefusedNamingThem)
{
	struct Case {
		const char *args, *expect;
	} cases[] = {
		{"", "A subcommand is required"},
		{"cdi generate --format xml", "--format: xml not in {yaml,json}"},
		{"cdi generate --device-name-strategy name", "name not in {index,uuid,both}"},
		{"cdi generate --refresh --dry-run", "--dry-run excludes --refresh"},
		{"cdi generate --no-inject --library /etc/hostname", "--library excludes --no-inject"},
		{"cdi generate --library /nonexistent", "/nonexistent"},
		{"cdi validate a b", "not expected: b"},
		{"runtime configure", "--runtime is required"},
		{"runtime configure --runtime lxc", "lxc not in {containerd,crio,cri-o,docker,podman}"},
		{"runtime configure --runtime docker --root /nonexistent", "/nonexistent"},
		{"info --jsn", "--jsn"},
	};
	for (auto &c : cases) {
		auto r = ctk(c.args);
		EXPECT_EQ(r.exit, 2) << c.args << ": " << r.out;
		EXPECT_NE(r.out.find(c.expect), std::string::npos) << c.args << ": " << r.out;
		EXPECT_NE(r.out.find("--help"), std::string::npos) << c.args << ": " << r.out;
	}
}
