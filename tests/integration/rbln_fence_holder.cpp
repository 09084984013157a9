// Holds a finished job's sync_file after its device file is closed, for
// tests/vm/suite.sh: prints "holding" once the sync_file is all that is
// left, waits for a line on stdin, then asks the sync_file what it holds
// (SYNC_IOC_FILE_INFO calls the fences' ops) and closes it.  Exit 0 when
// the job's fence reads as signalled without error.
#include <cstdio>
#include <fstream>
#include <iostream>
#include <string>
#include <sys/ioctl.h>
#include <unistd.h>

#include <linux/sync_file.h>

#include "rbln/devmgr.hpp"

// Writes the simulator's no_direct switch of NPU 0; false if it could not.
static bool scheduled_only(bool on)
{
	std::ofstream f("/sys/kernel/debug/rbln/rbln0/no_direct");
	return bool((f << (on ? "1" : "0")).flush());
}

int main()
{
	int fd;
	{
		auto dev = rbln::Device::open(0);
		constexpr uint64_t size = 1ull << 20;
		auto a = dev.allocate(size, rbln::Placement::on_chiplet(0), rbln::AllocMode::eager);
		auto b = dev.allocate(size, rbln::Placement::on_chiplet(0), rbln::AllocMode::eager);
		// Scheduled, not run inside SUBMIT: its fence is the scheduler's, over a hardware fence.
		if (!scheduled_only(true)) {
			std::perror("fence-holder: no_direct");
			return 1;
		}
		auto job = dev.submit(rbln::Engine::task_dma, 0, {{a, b, 0, 0, size}});
		scheduled_only(false);
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
