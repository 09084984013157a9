// The profiler's cost per job on the host, for callgrind: the bench's
// libdevmgr chain (three dependent 4 KiB jobs) on a fake Rebel100, run
// without and then with a Session open, each in a function of its own:
//   valgrind --tool=callgrind --toggle-collect='chains_*' rbln_profile_cost
// and (chains_profiled - chains_unprofiled) / (3 * N) is the profiler's
// instructions per job.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>

#include "fake_npu.h"
#include "rbln/profile.hpp"

namespace {

struct Chain {
	rbln::Device dev = fake_npu::open();
	rbln::Buffer n_src = dev.allocate(4096, rbln::Placement::on_chiplet(1));
	rbln::Buffer n_dst = dev.allocate(4096, rbln::Placement::on_chiplet(1));
	rbln::Buffer gather = dev.allocate(4096, rbln::Placement::on_chiplet(0));
	rbln::Buffer host = dev.allocate_host(4096);

	void once()
	{
		auto produced = dev.submit(rbln::Engine::neural_dma, 1, {{n_src, n_dst, 0, 0, 4096}});
		auto gathered = dev.submit(rbln::Engine::task_dma, 0, {{n_dst, gather, 0, 0, 4096}}, {},
					   {produced});
		dev.submit(rbln::Engine::external_hdma, 0, {{gather, host, 0, 0, 4096}}, {}, {gathered})
			.wait(std::chrono::seconds(10));
	}
};

[[gnu::noipa]] void chains_unprofiled(Chain &c, int n)
{
	for (int i = 0; i < n; i++)
		c.once();
}

[[gnu::noipa]] void chains_profiled(Chain &c, int n)
{
	for (int i = 0; i < n; i++)
		c.once();
}

} // namespace

int main(int argc, char **argv)
{
	const int n = argc > 1 ? std::atoi(argv[1]) : 10000;
	const std::string dir = std::filesystem::temp_directory_path() / "rbln-profile-cost";
	std::filesystem::create_directories(dir);
	Chain c;
	c.once();	// warm: the first submit asks the job limit
	chains_unprofiled(c, n);
	{
		rbln::profile::Session run(dir);
		chains_profiled(c, n);
		std::filesystem::remove(run.end());
	}
	std::printf("%d chains each way (%d jobs)\n", n, 3 * n);
	return 0;
}
