// rbln-smi triage: from an error message to the layer that failed and what
// to check first (seed 003's symptom -> layer table), as data.
#pragma once

#include <string>
#include <vector>

namespace rbln::smi {

struct TriageRule {
	std::string pattern;	// ECMAScript regex, case-insensitive
	std::string layer;
	std::string check;
};

struct TriageVerdict {
	std::string layer;
	std::string check;
	bool matched;
};

const std::vector<TriageRule> &triage_rules();
TriageVerdict triage(const std::string &message);

} // namespace rbln::smi
