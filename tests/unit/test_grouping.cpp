// The grouping rules, one row per rule, each message checked word for word.
#include <gtest/gtest.h>

#include "rbln/grouping.hpp"

using namespace rbln;

namespace {

const std::vector<PhysicalNpu> kHost = {
	{0, "52424c4e-1120-4001-8000-000000000000"},
	{1, "52424c4e-2030-4003-8000-000000000001"},
	{2, "52424c4e-2030-4003-8000-000000000002"},
	{3, "52424c4e-2030-4003-8000-000000000003"},
};

struct Env {
	const char *visible = nullptr, *devices = nullptr, *npus = nullptr, *map = nullptr;
	GroupingEnv get() const
	{
		auto opt = [](const char *s) { return s ? std::optional<std::string>(s) : std::nullopt; };
		return {opt(visible), opt(devices), opt(npus), opt(map)};
	}
};

std::vector<std::vector<unsigned>> groups(const Plan &p)
{
	std::vector<std::vector<unsigned>> out;
	for (const auto &d : p.devices)
		out.push_back(d.npus);
	return out;
}

using Groups = std::vector<std::vector<unsigned>>;

} // namespace

struct GoodRow {
	const char *why;
	Env env;
	Groups expect;
	std::vector<unsigned> unused;
	std::vector<std::string> warnings;
};

TEST(Grouping, ValidConfigurations)
{
	const GoodRow rows[] = {
		{"nothing set: one NPU per logical device", {}, {{0}, {1}, {2}, {3}}, {}, {}},
		{"visible subset, in the order given", {.visible = "2,0"}, {{2}, {0}}, {}, {}},
		{"visible by uuid, any case, with spaces",
		 {.visible = " 52424C4E-2030-4003-8000-000000000003 , 1"}, {{3}, {1}}, {}, {}},
		{"set but empty: none, said out loud", {.visible = ""}, {}, {},
		 {"RBLN_VISIBLE_DEVICES is set but empty: no NPU is visible to this process (unset it or "
		  "say 'all' to use all NPUs, 'none' for none)"}},
		{"the container runtimes' 'all': every NPU", {.visible = "all"}, {{0}, {1}, {2}, {3}}, {}, {}},
		{"'ALL' in any case, with spaces", {.visible = " ALL ", .npus = "2"}, {{0, 1}, {2, 3}}, {}, {}},
		{"'none': no NPU, deliberately, so no warning", {.visible = "none"}, {}, {}, {}},
		{"'void': as 'none'", {.visible = "void"}, {}, {}, {}},
		{"deprecated alias", {.devices = "1"}, {{1}}, {},
		 {"RBLN_DEVICES is deprecated; use RBLN_VISIBLE_DEVICES"}},
		{"both: the new one wins", {.visible = "0", .devices = "1"}, {{0}}, {},
		 {"both RBLN_VISIBLE_DEVICES and the deprecated RBLN_DEVICES are set; using "
		  "RBLN_VISIBLE_DEVICES"}},
		{"groups of two", {.npus = "2"}, {{0, 1}, {2, 3}}, {}, {}},
		{"leftover NPUs are unused", {.visible = "0,1,2", .npus = "2"}, {{0, 1}}, {2},
		 {"NPU(s) of host id(s) [2] are in no logical device and stay unused"}},
		{"explicit map", {.map = "[0,1],[2,3]"}, {{0, 1}, {2, 3}}, {}, {}},
		{"map with spaces", {.map = " [ 3 ] , [0 ,1] "}, {{3}, {0, 1}}, {2},
		 {"NPU(s) of host id(s) [2] are in no logical device and stay unused"}},
		{"map ids count visible NPUs", {.visible = "3,1", .map = "[1],[0]"}, {{1}, {3}}, {}, {}},
		{"map wins over group size", {.npus = "4", .map = "[0,1]"}, {{0, 1}}, {2, 3},
		 {"RBLN_DEVICE_MAP is set, so RBLN_NPUS_PER_DEVICE is ignored",
		  "NPU(s) of host id(s) [2,3] are in no logical device and stay unused"}},
	};
	for (const auto &row : rows) {
		SCOPED_TRACE(row.why);
		Plan p = make_plan(kHost, row.env.get());
		EXPECT_EQ(groups(p), row.expect);
		EXPECT_EQ(p.unused, row.unused);
		EXPECT_EQ(p.warnings, row.warnings);
	}
}

struct BadRow {
	Env env;
	const char *message;
};

TEST(Grouping, EveryErrorNamesTheVariableTheValueAndWhatIsValid)
{
	const BadRow rows[] = {
		{{.visible = "0,,1"}, "RBLN_VISIBLE_DEVICES: empty entry at position 2 (expected NPU "
				      "indices or uuids separated by commas, e.g. 0,1)"},
		{{.visible = "7"}, "RBLN_VISIBLE_DEVICES: host id 7 does not exist (this host's NPUs: host "
				   "ids 0,1,2,3)"},
		{{.visible = "01"}, "RBLN_VISIBLE_DEVICES: '01' has a leading zero (write host id 1)"},
		{{.visible = "abc"}, "RBLN_VISIBLE_DEVICES: 'abc' is neither an NPU index nor the uuid of "
				     "an NPU on this host (valid: all, none, void, or indices or uuids "
				     "separated by commas; NPUs: 0,1,2,3)"},
		{{.visible = "-1"}, "RBLN_VISIBLE_DEVICES: '-1' is neither an NPU index nor the uuid of an "
				    "NPU on this host (valid: all, none, void, or indices or uuids "
				    "separated by commas; NPUs: 0,1,2,3)"},
		{{.visible = "all,0"}, "RBLN_VISIBLE_DEVICES: 'all' is neither an NPU index nor the uuid "
				       "of an NPU on this host (valid: all, none, void, or indices or "
				       "uuids separated by commas; NPUs: 0,1,2,3)"},
		{{.visible = "1,1"}, "RBLN_VISIBLE_DEVICES: host id 1 is listed twice"},
		{{.visible = "1,52424c4e-2030-4003-8000-000000000001"},
		 "RBLN_VISIBLE_DEVICES: host id 1 is listed twice"},
		{{.devices = "9"}, "RBLN_DEVICES: host id 9 does not exist (this host's NPUs: host ids "
				   "0,1,2,3)"},
		{{.npus = "3"}, "RBLN_NPUS_PER_DEVICE='3': must be one of 1, 2, 4, 8, 16 or 32"},
		{{.npus = "two"}, "RBLN_NPUS_PER_DEVICE='two': must be one of 1, 2, 4, 8, 16 or 32"},
		{{.npus = ""}, "RBLN_NPUS_PER_DEVICE='': must be one of 1, 2, 4, 8, 16 or 32"},
		{{.npus = "04"}, "RBLN_NPUS_PER_DEVICE='04': must be one of 1, 2, 4, 8, 16 or 32"},
		{{.visible = "0,1,2", .npus = "4"},
		 "No logical device (this process has 3 physical NPU(s), need 4 for RBLN_NPUS_PER_DEVICE=4)"},
		{{.map = ""}, "RBLN_DEVICE_MAP is set but empty; expected groups like [0,1],[2,3]"},
		{{.map = "0,1"}, "Invalid RBLN_DEVICE_MAP format. Expected '[' at position 0 in '0,1' "
				 "(example: [0,1],[2,3])"},
		{{.map = "[0,1"}, "Invalid RBLN_DEVICE_MAP format. Expected ',' or ']' at position 4 in "
				  "'[0,1' (example: [0,1],[2,3])"},
		{{.map = "[0,]"}, "Invalid RBLN_DEVICE_MAP format. Expected a visible index at position 3 "
				  "in '[0,]' (example: [0,1],[2,3])"},
		{{.map = "[0] [1]"}, "Invalid RBLN_DEVICE_MAP format. Expected ',' between groups or the end "
				     "at position 4 in '[0] [1]' (example: [0,1],[2,3])"},
		{{.map = "[0],"}, "Invalid RBLN_DEVICE_MAP format. Expected '[' at position 4 in '[0],' "
				  "(example: [0,1],[2,3])"},
		{{.map = "[0,1,2]"}, "RBLN_DEVICE_MAP: group 0 [0,1,2] has 3 NPU(s); group sizes must be "
				     "1, 2, 4, 8, 16 or 32"},
		{{.map = "[0],[2,0]"}, "RBLN_DEVICE_MAP: visible index 0 is listed twice (in groups 0 and 1)"},
		{{.map = "[0,0]"}, "RBLN_DEVICE_MAP: visible index 0 is listed twice (in group 0)"},
		{{.map = "[5]"}, "RBLN_DEVICE_MAP: visible index 5 out of range (this process sees 4 NPU(s): "
				 "visible indices 0..3)"},
		{{.visible = "3,1", .map = "[2]"},
		 "RBLN_DEVICE_MAP: visible index 2 out of range (this process sees 2 NPU(s): visible "
		 "indices 0..1, which are host ids 3,1; the map counts visible NPUs, not host ids)"},
		{{.visible = "", .map = "[0]"}, "RBLN_DEVICE_MAP: visible index 0 out of range (this process "
						"sees 0 NPU(s): none)"},
		{{.map = "[99999999999]"}, "RBLN_DEVICE_MAP: visible index 99999999999 out of range"},
		{{.map = "[0],[01]"}, "RBLN_DEVICE_MAP: visible index '01' at position 5 has a leading zero "
				      "(write 1)"},
	};
	for (const auto &row : rows) {
		try {
			make_plan(kHost, row.env.get());
			ADD_FAILURE() << "accepted; expected: " << row.message;
		} catch (const Error &e) {
			EXPECT_EQ(e.code(), Errc::invalid_argument);
			EXPECT_STREQ(e.what(), row.message);
		}
	}
}

TEST(Grouping, QueriesNeverThrow)
{
	Plan p;
	EXPECT_NO_THROW(p = plan_or_warning(kHost, Env{.npus = "3"}.get()));
	EXPECT_TRUE(p.devices.empty());
	ASSERT_EQ(p.warnings.size(), 1u);
	EXPECT_EQ(p.warnings[0], "no logical device is available: RBLN_NPUS_PER_DEVICE='3': must be "
				 "one of 1, 2, 4, 8, 16 or 32");
}

TEST(Grouping, SummaryTable)
{
	Plan p = make_plan(kHost, Env{.map = "[1,2],[0]"}.get());
	EXPECT_EQ(format_plan(p),
		  "Logical Device | Physical NPU IDs | Status\n"
		  "0              | 1, 2             | Active (Aggregated)\n"
		  "1              | 0                | Active\n"
		  "-              | 3                | Unused\n"
		  "(Physical NPU IDs are host ids, N of /dev/rblnN, which a container keeps; "
		  "RBLN_DEVICE_MAP counts the visible NPUs from 0 in RBLN_VISIBLE_DEVICES order)\n");
}
