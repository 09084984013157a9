// RBLN_VISIBLE_DEVICES / RBLN_NPUS_PER_DEVICE / RBLN_DEVICE_MAP: parsing and
// planning, with messages that say which variable, where, and what is valid.
#include <algorithm>
#include <array>
#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <map>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "device_state.h"
#include "rbln/grouping.hpp"

RBLN_CXX_ABI_BEGIN

namespace {

constexpr unsigned kGroupSizes[] = {1, 2, 4, 8, 16, 32};
constexpr const char *kGroupSizesText = "1, 2, 4, 8, 16 or 32";

[[noreturn]] void config_error(const std::string &message)
{
	detail::fail(EINVAL, message);
}

bool allowed_group_size(size_t n)
{
	return std::find(std::begin(kGroupSizes), std::end(kGroupSizes), n) != std::end(kGroupSizes);
}

std::string trim(const std::string &s)
{
	size_t b = s.find_first_not_of(" \t"), e = s.find_last_not_of(" \t");
	return b == std::string::npos ? std::string() : s.substr(b, e - b + 1);
}

bool all_digits(const std::string &s)
{
	return !s.empty() && std::all_of(s.begin(), s.end(), ::isdigit);
}

// "04" is not 4: a number is written as it is meant, so a typo is not read as
// another NPU or size.
bool leading_zero(const std::string &digits)
{
	return digits.size() > 1 && digits[0] == '0';
}

std::string without_leading_zeros(const std::string &digits)
{
	size_t first = digits.find_first_not_of('0');
	return first == std::string::npos ? "0" : digits.substr(first);
}

// A decimal number of at most 9 digits (no sign, no leading zero); nullopt otherwise.
std::optional<unsigned> small_number(const std::string &s)
{
	if (!all_digits(s) || s.size() > 9 || leading_zero(s))
		return std::nullopt;
	return unsigned(std::stoul(s));
}

// "0,1,3": host ids, for messages.
std::string host_ids_text(const std::vector<PhysicalNpu> &npus)
{
	std::vector<unsigned> indices;
	for (const auto &h : npus)
		indices.push_back(h.index);
	return indices.empty() ? std::string("none") : fmt::format("{}", fmt::join(indices, ","));
}

// What RBLN_DEVICE_MAP may name: "visible indices 0..1, which are host ids
// 3,1; ...", said only when the two numberings differ.
std::string visible_text(const std::vector<PhysicalNpu> &visible)
{
	if (visible.empty())
		return "none";
	std::string text = fmt::format("visible indices 0..{}", visible.size() - 1);
	for (unsigned i = 0; i < visible.size(); i++)
		if (visible[i].index != i)
			return text + fmt::format(", which are host ids {}; the map counts visible NPUs, "
						  "not host ids", host_ids_text(visible));
	return text;
}

} // namespace

std::vector<PhysicalNpu> parse_visible_devices(const std::vector<PhysicalNpu> &host,
					       const std::string &var, const std::string &value,
					       std::vector<std::string> &warnings)
{
	std::string word = trim(value);
	std::transform(word.begin(), word.end(), word.begin(), ::tolower);
	if (word.empty()) {
		warnings.push_back(fmt::format("{} is set but empty: no NPU is visible to this process "
					       "(unset it or say 'all' to use all NPUs, 'none' for none)", var));
		return {};
	}
	// The container runtimes' words, understood here too (docs/rbln-smi.md).
	if (word == "all")
		return host;
	if (word == "none" || word == "void")
		return {};
	std::vector<PhysicalNpu> out;
	size_t pos = 0;
	while (true) {
		size_t comma = value.find(',', pos);
		std::string entry = trim(value.substr(pos, comma == std::string::npos ? std::string::npos
										       : comma - pos));
		if (entry.empty())
			config_error(fmt::format("{}: empty entry at position {} (expected NPU indices or "
						 "uuids separated by commas, e.g. 0,1)", var, pos));
		const PhysicalNpu *npu = nullptr;
		if (all_digits(entry) && leading_zero(entry))
			config_error(fmt::format("{}: '{}' has a leading zero (write host id {})", var, entry,
						 without_leading_zeros(entry)));
		if (auto n = small_number(entry)) {
			auto it = std::find_if(host.begin(), host.end(), [&](auto &h) { return h.index == *n; });
			if (it == host.end())
				config_error(fmt::format("{}: host id {} does not exist (this host's NPUs: host "
							 "ids {})", var, entry, host_ids_text(host)));
			npu = &*it;
		} else {
			std::string lower = entry;
			std::transform(lower.begin(), lower.end(), lower.begin(), ::tolower);
			auto it = std::find_if(host.begin(), host.end(), [&](auto &h) { return h.uuid == lower; });
			if (it == host.end())
				config_error(fmt::format("{}: '{}' is neither an NPU index nor the uuid of an "
							 "NPU on this host (valid: all, none, void, or indices "
							 "or uuids separated by commas; NPUs: {})",
							 var, entry, host_ids_text(host)));
			npu = &*it;
		}
		if (std::any_of(out.begin(), out.end(), [&](auto &v) { return v.index == npu->index; }))
			config_error(fmt::format("{}: host id {} is listed twice", var, npu->index));
		out.push_back(*npu);
		if (comma == std::string::npos)
			break;
		pos = comma + 1;
	}
	return out;
}

namespace {

// "[0,1],[2,3]" into groups of visible indices.
class MapParser {
public:
	explicit MapParser(const std::string &text) : s_(text) {}

	std::vector<std::vector<unsigned>> parse()
	{
		std::vector<std::vector<unsigned>> groups;
		skip_space();
		if (at_end())
			config_error("RBLN_DEVICE_MAP is set but empty; expected groups like [0,1],[2,3]");
		while (true) {
			expect('[');
			std::vector<unsigned> group;
			while (true) {
				group.push_back(number());
				skip_space();
				if (peek() == ',') {
					i_++;
					continue;
				}
				if (peek() == ']')
					break;
				error("',' or ']'");
			}
			i_++;	// ']'
			groups.push_back(std::move(group));
			skip_space();
			if (at_end())
				return groups;
			if (peek() != ',')
				error("',' between groups or the end");
			i_++;
		}
	}

private:
	[[noreturn]] void error(const std::string &what)
	{
		config_error(fmt::format("Invalid RBLN_DEVICE_MAP format. Expected {} at position {} in "
					 "'{}' (example: [0,1],[2,3])", what, i_, s_));
	}
	void skip_space()
	{
		while (i_ < s_.size() && (s_[i_] == ' ' || s_[i_] == '\t'))
			i_++;
	}
	bool at_end() const { return i_ >= s_.size(); }
	char peek() const { return at_end() ? '\0' : s_[i_]; }
	void expect(char c)
	{
		skip_space();
		if (peek() != c)
			error(fmt::format("'{}'", c));
		i_++;
	}
	unsigned number()
	{
		skip_space();
		size_t start = i_;
		while (i_ < s_.size() && std::isdigit(static_cast<unsigned char>(s_[i_])))
			i_++;
		if (start == i_)
			error("a visible index");
		std::string digits = s_.substr(start, i_ - start);
		if (digits.size() > 9)
			config_error(fmt::format("RBLN_DEVICE_MAP: visible index {} out of range", digits));
		if (leading_zero(digits))
			config_error(fmt::format("RBLN_DEVICE_MAP: visible index '{}' at position {} has a "
						 "leading zero (write {})", digits, start, without_leading_zeros(digits)));
		return unsigned(std::stoul(digits));
	}

	const std::string &s_;
	size_t i_ = 0;
};

std::vector<std::vector<unsigned>> groups_from_map(const std::string &map,
						   const std::vector<PhysicalNpu> &visible)
{
	auto groups = MapParser(map).parse();
	std::map<unsigned, size_t> owner;
	for (size_t g = 0; g < groups.size(); g++) {
		if (!allowed_group_size(groups[g].size()))
			config_error(fmt::format("RBLN_DEVICE_MAP: group {} [{}] has {} NPU(s); group sizes "
						 "must be {}", g, fmt::join(groups[g], ","), groups[g].size(),
						 kGroupSizesText));
		for (unsigned id : groups[g]) {
			if (id >= visible.size())
				config_error(fmt::format("RBLN_DEVICE_MAP: visible index {} out of range (this "
							 "process sees {} NPU(s): {})", id, visible.size(),
							 visible_text(visible)));
			auto [it, fresh] = owner.emplace(id, g);
			if (!fresh)
				config_error(fmt::format("RBLN_DEVICE_MAP: visible index {} is listed twice ({})", id,
							 it->second == g ? fmt::format("in group {}", g)
									 : fmt::format("in groups {} and {}", it->second, g)));
		}
	}
	return groups;
}

std::vector<std::vector<unsigned>> groups_of_size(const std::string &value, size_t visible)
{
	auto n = small_number(trim(value));
	if (!n || !allowed_group_size(*n))
		config_error(fmt::format("RBLN_NPUS_PER_DEVICE='{}': must be one of {}", value,
					 kGroupSizesText));
	if (visible < *n)
		config_error(fmt::format("No logical device (this process has {} physical NPU(s), need {} "
					 "for RBLN_NPUS_PER_DEVICE={})", visible, *n, *n));
	std::vector<std::vector<unsigned>> groups;
	for (unsigned start = 0; start + *n <= visible; start += *n) {
		groups.emplace_back();
		for (unsigned i = 0; i < *n; i++)
			groups.back().push_back(start + i);
	}
	return groups;
}

} // namespace

GroupingEnv GroupingEnv::from_process()
{
	auto get = [](const char *name) -> std::optional<std::string> {
		const char *v = std::getenv(name);
		return v ? std::optional<std::string>(v) : std::nullopt;
	};
	return {get("RBLN_VISIBLE_DEVICES"), get("RBLN_DEVICES"), get("RBLN_NPUS_PER_DEVICE"),
		get("RBLN_DEVICE_MAP")};
}

Plan make_plan(const std::vector<PhysicalNpu> &host, const GroupingEnv &env)
{
	Plan plan;
	std::vector<PhysicalNpu> visible = host;
	if (env.visible_devices) {
		if (env.devices)
			plan.warnings.push_back("both RBLN_VISIBLE_DEVICES and the deprecated RBLN_DEVICES "
						"are set; using RBLN_VISIBLE_DEVICES");
		visible = parse_visible_devices(host, "RBLN_VISIBLE_DEVICES", *env.visible_devices, plan.warnings);
	} else if (env.devices) {
		plan.warnings.push_back("RBLN_DEVICES is deprecated; use RBLN_VISIBLE_DEVICES");
		visible = parse_visible_devices(host, "RBLN_DEVICES", *env.devices, plan.warnings);
	}

	std::vector<std::vector<unsigned>> groups;
	if (env.device_map) {
		if (env.npus_per_device)
			plan.warnings.push_back("RBLN_DEVICE_MAP is set, so RBLN_NPUS_PER_DEVICE is ignored");
		groups = groups_from_map(*env.device_map, visible);
	} else if (env.npus_per_device) {
		groups = groups_of_size(*env.npus_per_device, visible.size());
	} else {
		for (unsigned i = 0; i < visible.size(); i++)
			groups.push_back({i});
	}

	std::vector<bool> taken(visible.size());
	for (unsigned g = 0; g < groups.size(); g++) {
		LogicalDevice dev{g, {}};
		for (unsigned id : groups[g]) {
			dev.npus.push_back(visible[id].index);
			taken[id] = true;
		}
		plan.devices.push_back(std::move(dev));
	}
	for (unsigned i = 0; i < visible.size(); i++)
		if (!taken[i])
			plan.unused.push_back(visible[i].index);
	if (!plan.unused.empty())
		plan.warnings.push_back(fmt::format("NPU(s) of host id(s) [{}] are in no logical device "
						    "and stay unused", fmt::join(plan.unused, ",")));
	return plan;
}

Plan plan_or_warning(const std::vector<PhysicalNpu> &host, const GroupingEnv &env)
{
	try {
		return make_plan(host, env);
	} catch (const Error &e) {
		Plan plan;
		plan.warnings.push_back(fmt::format("no logical device is available: {}", e.what()));
		return plan;
	}
}

std::string format_plan(const Plan &plan)
{
	std::vector<std::array<std::string, 3>> rows;
	for (const auto &d : plan.devices)
		rows.push_back({std::to_string(d.id), fmt::format("{}", fmt::join(d.npus, ", ")),
				d.npus.size() > 1 ? "Active (Aggregated)" : "Active"});
	for (unsigned npu : plan.unused)
		rows.push_back({"-", std::to_string(npu), "Unused"});

	std::array<std::string, 3> head{"Logical Device", "Physical NPU IDs", "Status"};
	std::array<size_t, 3> width{};
	for (size_t c = 0; c < 3; c++) {
		width[c] = head[c].size();
		for (const auto &r : rows)
			width[c] = std::max(width[c], r[c].size());
	}
	auto line = [&](const std::array<std::string, 3> &r) {
		return fmt::format("{:<{}} | {:<{}} | {}\n", r[0], width[0], r[1], width[1], r[2]);
	};
	std::string out = line(head);
	for (const auto &r : rows)
		out += line(r);
	return out + "(Physical NPU IDs are host ids, N of /dev/rblnN, which a container keeps; "
		     "RBLN_DEVICE_MAP counts the visible NPUs from 0 in RBLN_VISIBLE_DEVICES order)\n";
}

RBLN_CXX_ABI_END // namespace rbln
