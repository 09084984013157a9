// Holds a finished job's sync_file after its device file is closed, for
// tests/vm/suite.sh: prints "holding" once the sync_file is all that is
// left, waits for a line on stdin, then asks the sync_file what it holds
// (SYNC_IOC_FILE_INFO calls the fences' ops) and closes it.  Exit 0 when
// the job's fence reads as signalled without error.
#include <cstdio>
#include <cstring>
#include <iostream>
#include <string>
#include <sys/ioctl.h>
#include <unistd.h>

#include <linux/sync_file.h>

#include "rbln/devmgr.hpp"
#include "rbln_test_util.h"

int main()
{
	int fd;
	{
		auto dev = rbln::Device::open(0);
		constexpr uint64_t size = 1ull << 20;
		auto a = dev.allocate(size, rbln::Placement::on_chiplet(0), rbln::AllocMode::eager);
		auto b = dev.allocate(size, rbln::Placement::on_chiplet(0), rbln::AllocMode::eager);
		// Scheduled, not run inside SUBMIT: its fence is the scheduler's, over a hardware fence.
		rbln::test::ScheduledJobs only(0);
		if (only.error()) {
			std::fprintf(stderr, "fence-holder: no_direct: %s\n", std::strerror(only.error()));
			return 1;
		}
		auto job = dev.submit(rbln::Engine::task_dma, 0, {{a, b, 0, 0, size}});
		job.wait();
		fd = job.fd();
	}
	std::puts("holding");
	std::fflush(stdout);
	std::string line;
	std::getline(std::cin, line);

	sync_file_info info{};
	if (ioctl(fd, SYNC_IOC_FILE_INFO, &info)) {
		std::perror("fence-holder: SYNC_IOC_FILE_INFO");
		return 1;
	}
	std::printf("fence-holder: sync_file \"%s\": %u fence(s), status %d\n", info.name,
		    info.num_fences, info.status);
	close(fd);
	return info.status == 1 ? 0 : 1;
}
