// Writes the specs `rbln-ctk cdi generate` makes for a made-up host of three
// NPUs, in every name strategy and format, with and without the injection of
// the library, rbln-smi and the ldcache hook, into DIR, so an independent
// CDI implementation can read them (tests/cdi-go/check.sh).
#include <cstdio>
#include <filesystem>
#include <fstream>

#include <fmt/format.h>

#include "cdi.hpp"
#include "injection.hpp"

using namespace rbln;
using namespace rbln::ctk;

int main(int argc, char **argv)
{
	if (argc != 5) {
		fmt::print(stderr, "usage: cdi_samples DIR LIBRARY RBLN_SMI RBLN_CTK\n");
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
		std::vector<std::string> warnings;
		json spec = make_spec(host, strategy);
		json injected = make_spec(host, strategy, injection_edits({argv[2], argv[3], argv[4]}, warnings));
		if (!warnings.empty() || !injected.contains("containerEdits")) {
			fmt::print(stderr, "cdi_samples: no injection: {}\n", warnings.empty() ? "" : warnings[0]);
			return 1;
		}
		std::ofstream(fmt::format("{}/rbln-{}.yaml", argv[1], name)) << spec_to_yaml(spec);
		std::ofstream(fmt::format("{}/rbln-{}.json", argv[1], name)) << spec_to_json(spec);
		std::ofstream(fmt::format("{}/rbln-{}-injected.yaml", argv[1], name)) << spec_to_yaml(injected);
		std::ofstream(fmt::format("{}/rbln-{}-injected.json", argv[1], name)) << spec_to_json(injected);
	}
	return 0;
}
