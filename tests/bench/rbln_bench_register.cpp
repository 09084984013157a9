// make bench: what registering a logical device of N NPUs costs a runtime.
//
//   rbln_bench_register N K [time]
//
// RBLN_NPUS_PER_DEVICE=N; one registration first (it pays the process's one
// enumeration), then K times register + free of logical device 0.  With
// "time" it then prints the mean ns of one register+free and of one null
// ioctl (the baseline).  tests/vm/bench-register.sh counts system calls with
// strace for K = 0 and K = 20: the difference is the cost of 20 registrations.
#include <chrono>
#include <cstdlib>
#include <string>

#include <fmt/format.h>

#include "rbln/devmgr.hpp"
#include "rbln/enumerate.hpp"
#include "rbln_drm.h"

using Clock = std::chrono::steady_clock;

int main(int argc, char **argv)
{
	if (argc < 3 || argc > 4) {
		fmt::print(stderr, "usage: rbln_bench_register NPUS_PER_DEVICE COUNT [time]\n");
		return 2;
	}
	const int count = std::atoi(argv[2]);
	setenv("RBLN_NPUS_PER_DEVICE", argv[1], 1);
	rbln::register_logical_device(0);	// the first one enumerates
	auto start = Clock::now();
	for (int i = 0; i < count; i++)
		rbln::register_logical_device(0);	// acquired, then freed at once
	if (argc < 4 || std::string(argv[3]) != "time" || count <= 0)
		return 0;
	double register_ns = std::chrono::duration<double, std::nano>(Clock::now() - start).count() / count;

	auto dev = rbln::Device::open(0);
	const int null_iters = 2000;
	start = Clock::now();
	for (int i = 0; i < null_iters; i++)
		dev.param(DRM_RBLN_PARAM_UAPI_VERSION);
	double null_ns = std::chrono::duration<double, std::nano>(Clock::now() - start).count() / null_iters;
	fmt::print("{:.0f} {:.0f}\n", register_ns, null_ns);
	return 0;
}
