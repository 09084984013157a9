// Fuzz target for the grouping parser and planner.  Input: a byte whose low
// four bits say which variables are set, then their values separated by '\n'.
// Whatever the input, make_plan() either returns a consistent plan or throws
// rbln::Error(invalid_argument) with a message naming a variable, and
// plan_or_warning() never throws.
#include <cstdint>
#include <cstdlib>
#include <set>
#include <string>

#include "rbln/grouping.hpp"

namespace {

const std::vector<rbln::PhysicalNpu> kHost = {
	{0, "52424c4e-1120-4001-8000-000000000000"},
	{1, "52424c4e-2030-4003-8000-000000000001"},
	{2, "52424c4e-2030-4003-8000-000000000002"},
	{5, "52424c4e-2030-4003-8000-000000000005"},
};

void check(bool ok)
{
	if (!ok)
		std::abort();
}

void check_plan(const rbln::Plan &plan)
{
	std::set<unsigned> seen;
	for (const auto &d : plan.devices) {
		size_t n = d.npus.size();
		check(n == 1 || n == 2 || n == 4 || n == 8 || n == 16 || n == 32);
		for (unsigned npu : d.npus)
			check(seen.insert(npu).second);
	}
	for (unsigned npu : plan.unused)
		check(seen.insert(npu).second);
	for (unsigned npu : seen)
		check(npu == 0 || npu == 1 || npu == 2 || npu == 5);
	check(!rbln::format_plan(plan).empty());
}

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0)
		return 0;
	const unsigned set = data[0];
	std::string rest(reinterpret_cast<const char *>(data + 1), size - 1);
	std::optional<std::string> vars[4];
	size_t pos = 0;
	for (int i = 0; i < 4; i++) {
		size_t nl = rest.find('\n', pos);
		std::string value = rest.substr(pos, nl == std::string::npos ? std::string::npos : nl - pos);
		if (set & (1u << i))
			vars[i] = value;
		pos = nl == std::string::npos ? rest.size() : nl + 1;
	}
	rbln::GroupingEnv env{vars[0], vars[1], vars[2], vars[3]};

	try {
		check_plan(rbln::make_plan(kHost, env));
	} catch (const rbln::Error &e) {
		std::string msg = e.what();
		check(e.code() == rbln::Errc::invalid_argument);
		check(msg.starts_with("RBLN_") || msg.starts_with("Invalid RBLN_DEVICE_MAP") ||
		      msg.starts_with("No logical device"));
	}
	check_plan(rbln::plan_or_warning(kHost, env));
	return 0;
}
