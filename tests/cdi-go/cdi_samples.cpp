// Writes the specs `rbln-ctk cdi generate` makes for a made-up host of three
// NPUs, in every name strategy and format, into the directory given, so an
// independent CDI implementation can read them (tests/cdi-go/check.sh).
#include <cstdio>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "cdi.hpp"

using namespace rbln;
using namespace rbln::ctk;

int main(int argc, char **argv)
{
	if (argc != 2) {
		fmt::print(stderr, "usage: cdi_samples DIR\n");
		return 2;
	}
	std::vector<NpuInfo> host;
	for (unsigned i = 0; i < 3; i++) {
		NpuInfo n{};
		n.index = i;
		n.node = fmt::format("/dev/accel/accel{}", i);
		n.uuid = fmt::format("52424c4e-2030-4003-8000-0000000000{}", 10 + i);
		host.push_back(n);
	}
	std::filesystem::create_directories(argv[1]);
	for (auto [strategy, name] : {std::pair{NameStrategy::index, "index"}, std::pair{NameStrategy::uuid, "uuid"},
				      std::pair{NameStrategy::both, "both"}}) {
		json spec = make_spec(host, strategy);
		std::ofstream(fmt::format("{}/rbln-{}.yaml", argv[1], name)) << spec_to_yaml(spec);
		std::ofstream(fmt::format("{}/rbln-{}.json", argv[1], name)) << spec_to_json(spec);
	}
	return 0;
}
