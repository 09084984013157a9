// rbln-example-rebel100: the seed's pattern on a Rebel100, for the profiler.
// Each workload of each instance: the input goes in by External HDMA and its
// embedding moves by Task DMA; each weight is split by parameter name over
// chiplets 1-3 and loaded by their Neural DMA; the layernorm weight goes only
// to chiplet 0 by Task DMA; chiplet 0's Task DMA gathers the chiplets'
// results; External HDMA sends the result out once the gathers are done.
// Jobs wait for one another through syncobjs (submit's `after`), so every
// arrow of the trace is a real dependency.  Run it with RBLN_PROFILER=1.
#include <chrono>
#include <cstdio>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "rbln/devmgr.hpp"
#include "rbln/exit_codes.hpp"
#include "rbln/profile.hpp"

namespace {

constexpr uint64_t kShare = 64 << 10;	// bytes of one chiplet's share of a weight

const char *const kWeights[] = {
	"model.model.layers.0.self_attn.q_proj.weight",
	"model.model.layers.0.self_attn.k_proj.weight",
	"model.model.layers.0.self_attn.v_proj.weight",
};

struct Chiplet {
	rbln::Buffer store, work;	// the weights' home and the chiplet's working copy
};

void run_workload(rbln::Device &dev, const rbln::Buffer &host_in, const rbln::Buffer &host_out,
		  const rbln::Buffer &c0_in, const rbln::Buffer &c0_gather, std::vector<Chiplet> &chiplets,
		  unsigned instance, unsigned sequence, unsigned workload)
{
	using rbln::Engine;
	const std::string w = rbln::profile::label(instance, sequence, workload);
	rbln::profile::workload(dev.info().index, instance, sequence, workload);
	const uint64_t slot = uint64_t(instance) * kShare;	// each instance its own range
	rbln::Job in = dev.submit(Engine::external_hdma, 0, {{host_in, c0_in, slot, slot, kShare}},
				  w + "_input");
	rbln::Job embed = dev.submit(Engine::task_dma, 0, {{c0_in, c0_gather, slot, slot + 2 * kShare * 4, kShare}},
				     w + "_model.model.embed_tokens.weight", {in});
	std::vector<rbln::Job> gathers;
	for (unsigned c = 1; c < chiplets.size(); c++) {
		Chiplet &ch = chiplets[c];
		std::vector<rbln::Job> loads;
		for (size_t k = 0; k < std::size(kWeights); k++) {
			const uint64_t at = k * kShare;
			loads.push_back(dev.submit(Engine::neural_dma, c, {{ch.store, ch.work, at, at + slot * 4, kShare}},
						   fmt::format("{}_{}", w, kWeights[k]), {embed}));
		}
		// Chiplet 0 gathers chiplet c's result once its weights are in.
		gathers.push_back(dev.submit(Engine::task_dma, 0,
					     {{ch.work, c0_gather, slot * 4, (c - 1) * kShare + slot * 8, kShare}},
					     fmt::format("{}_gather_chiplet{}", w, c), loads));
	}
	gathers.push_back(dev.submit(Engine::task_dma, 0, {{c0_in, c0_gather, slot, 3 * kShare + slot * 8, 4096}},
				     w + "_model.model.layers.0.input_layernorm.weight", {embed}));
	rbln::Job out = dev.submit(Engine::external_hdma, 0,
				   {{c0_gather, host_out, slot * 8, slot * 4, 4 * kShare}}, w + "_output", gathers);
	out.wait();
}

} // namespace

int main(int argc, char **argv)
{
	CLI::App app{"The seed's Rebel100 pattern (weights split over chiplets 1-3, gather on "
		     "chiplet 0, out by External HDMA) for the profiler: run with RBLN_PROFILER=1"};
	unsigned npu = 1, workloads = 3, repeat = 1, pause_ms = 0;
	std::string profile_dir;
	app.add_option("--npu", npu, "the Rebel100's NPU index")->capture_default_str();
	app.add_option("--workloads", workloads, "workloads per instance")->capture_default_str()->check(CLI::Range(1, 1000));
	app.add_option("--repeat", repeat, "runs of the model (sequence index)")->capture_default_str()->check(CLI::Range(1, 100000));
	app.add_option("--pause-ms", pause_ms, "pause between workloads, so monitors see the process")->capture_default_str();
	app.add_option("--profile-dir", profile_dir,
		       "profile the workloads as one region (the seed's `with profile(output_dir=DIR)`): "
		       "its file DIR/rbln_{date}_{time}_N.pb when they are done, the whole trace at exit")
		->type_name("DIR");
	CLI11_PARSE(app, argc, argv);
	try {
		rbln::Device dev = rbln::Device::open(npu);
		if (dev.info().chiplet_count != 4) {
			std::fprintf(stderr, "rbln-example-rebel100: NPU %u is a %s with %u chiplet(s); this "
				     "example needs a Rebel100 (4 chiplets): pick one with --npu\n", npu,
				     dev.info().name.c_str(), dev.info().chiplet_count);
			return int(rbln::ExitCode::bad_argument);
		}
		rbln::Buffer host_in = dev.allocate_host(2 * kShare), host_out = dev.allocate_host(16 * kShare);
		rbln::Buffer c0_in = dev.allocate(2 * kShare, rbln::Placement::on_chiplet(0));
		rbln::Buffer c0_gather = dev.allocate(16 * kShare, rbln::Placement::on_chiplet(0));
		std::vector<Chiplet> chiplets;
		for (unsigned c = 0; c < 4; c++)
			chiplets.push_back({dev.allocate(std::size(kWeights) * kShare, rbln::Placement::on_chiplet(c)),
					    dev.allocate(8 * kShare, rbln::Placement::on_chiplet(c))});
		std::optional<rbln::profile::Session> region;
		if (!profile_dir.empty())
			region.emplace(profile_dir);
		for (unsigned seq = 0; seq < repeat; seq++)
			for (unsigned wl = 0; wl < workloads; wl++) {
				for (unsigned inst = 0; inst < 2; inst++)
					run_workload(dev, host_in, host_out, c0_in, c0_gather, chiplets, inst, seq, wl);
				if (pause_ms)
					std::this_thread::sleep_for(std::chrono::milliseconds(pause_ms));
			}
		std::printf("rbln-example-rebel100: %u run(s) of %u workloads x 2 instances on rbln%u\n", repeat,
			    workloads, npu);
		if (region)
			std::printf("rbln-example-rebel100: profiled region written to %s\n", region->end().c_str());
		return 0;
	} catch (const rbln::Error &e) {
		std::fprintf(stderr, "rbln-example-rebel100: %s\n", e.what());
		return int(rbln::exit_code(e));
	}
}
