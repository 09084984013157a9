// SPDX-License-Identifier: MIT
#include "nfd.hpp"

#include <algorithm>
#include <fstream>
#include <set>

#include <CLI/CLI.hpp>
#include <fmt/format.h>
#include <fmt/ranges.h>

#include "cdi.hpp"
#include "rbln/exit_codes.hpp"

namespace rbln::ctk {

std::string nfd_features(const std::vector<NpuInfo> &npus, const std::string &driver_version)
{
	constexpr const char *prefix = "rebellions.ai/npu";
	std::string out = fmt::format("{}.present={}\n{}.count={}\n", prefix, !npus.empty(), prefix, npus.size());
	if (npus.empty())
		return out;
	std::set<std::string> products;
	for (const auto &n : npus)
		products.insert(n.name);
	const auto chiplets = std::ranges::min(npus, {}, &NpuInfo::chiplet_count).chiplet_count;
	out += fmt::format("{}.product={}\n", prefix, fmt::join(products, "."));
	if (!driver_version.empty())
		out += fmt::format("{}.driver-version={}\n", prefix, driver_version);
	out += fmt::format("{}.chiplet-count={}\n", prefix, chiplets);
	return out;
}

int nfd_command(const std::vector<std::string> &args)
{
	CLI::App app{"rbln-ctk nfd: write the Node Feature Discovery feature file of this node's NPUs\n"
		     "(labels rebellions.ai/npu.present, .count, .product, .driver-version, .chiplet-count).\n"
		     "Exit status: 0 written, 1 failure, 2 bad argument.",
		     "rbln-ctk nfd"};
	std::string output = kNfdFeaturePath;
	bool dry_run = false;
	app.add_option("--output", output, "the feature file")->capture_default_str();
	app.add_flag("--dry-run", dry_run, "print the file instead of writing it");
	try {
		std::vector<std::string> reversed(args.rbegin(), args.rend());	// CLI11 takes them last first
		app.parse(reversed);
	} catch (const CLI::ParseError &e) {
		return app.exit(e) == 0 ? 0 : 2;
	}
	std::string driver;
	std::getline(std::ifstream("/sys/module/rbln/version"), driver);
	// No driver: no NPUs, and a file that says so (NFD drops the labels).
	const auto text = nfd_features(driver.empty() ? std::vector<NpuInfo>{} : enumerate_npus(), driver);
	if (dry_run) {
		fmt::print("{}", text);
		return 0;
	}
	try {
		write_file_atomic(output, text);
	} catch (const std::exception &e) {
		fmt::print(stderr, "rbln-ctk: {}\n", e.what());
		return int(exit_code(e));
	}
	fmt::print("rbln-ctk: wrote {}\n", output);
	return 0;
}

} // namespace rbln::ctk
