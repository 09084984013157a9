// Runs a fuzz target without libFuzzer (plain g++, in ctest): every seed,
// then deterministic mutations of them.  The real fuzzer: make fuzz.
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int main()
{
	const std::vector<std::string> seeds = {
		std::string("\x00", 1),
		"\x01" "0,1,2",
		"\x01" "52424c4e-2030-4003-8000-000000000005,0",
		"\x03" "\n1,2",
		"\x04\n\n2",
		"\x08\n\n\n[0,1],[2,5]",
		"\x09" "5,2,1\n\n\n[1],[0,2]",
		"\x0c\n\n4\n[0, 1]",
		"\x08\n\n\n[0,[1]]",
		"\x08\n\n\n[[",
		"\x01" ",,,",
		"\x04\n\n32",
	};
	std::mt19937 rng(12345);
	const std::string alphabet = "0123456789[],- \nabcdef";
	size_t runs = 0;
	for (int round = 0; round < 2000; round++) {
		std::string s = seeds[round % seeds.size()];
		if (round >= int(seeds.size())) {
			int edits = 1 + rng() % 4;
			for (int e = 0; e < edits; e++) {
				size_t at = s.empty() ? 0 : rng() % s.size();
				switch (rng() % 3) {
				case 0: if (!s.empty()) s.erase(at, 1); break;
				case 1: s.insert(s.begin() + at, alphabet[rng() % alphabet.size()]); break;
				default: if (!s.empty()) s[at] = alphabet[rng() % alphabet.size()]; break;
				}
			}
			if (!s.empty())
				s[0] = char(rng() % 16);
		}
		LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t *>(s.data()), s.size());
		runs++;
	}
	std::printf("fuzz replay: %zu inputs, no invariant broken\n", runs);
	return 0;
}
