// SPDX-License-Identifier: MIT
// rbln-ctk nfd's feature file from a list of NPUs.
#include <gtest/gtest.h>

#include "nfd.hpp"

using rbln::NpuInfo;
using rbln::ctk::nfd_features;

namespace {

NpuInfo npu(unsigned index, const std::string &name, uint32_t chiplets)
{
	return {index, "", "", name, "", "", "", "READY", 0, chiplets, true};
}

} // namespace

TEST(Nfd, OneProduct)
{
	EXPECT_EQ(nfd_features({npu(0, "RBLN-CR03", 4), npu(1, "RBLN-CR03", 4)}, "0.5.0"),
		  "rebellions.ai/npu.present=true\n"
		  "rebellions.ai/npu.count=2\n"
		  "rebellions.ai/npu.product=RBLN-CR03\n"
		  "rebellions.ai/npu.driver-version=0.5.0\n"
		  "rebellions.ai/npu.chiplet-count=4\n");
}

TEST(Nfd, MixedProductsAndNone)
{
	EXPECT_EQ(nfd_features({npu(0, "RBLN-CR03", 4), npu(1, "RBLN-CA12", 1)}, "0.5.0"),
		  "rebellions.ai/npu.present=true\n"
		  "rebellions.ai/npu.count=2\n"
		  "rebellions.ai/npu.product=RBLN-CA12.RBLN-CR03\n"
		  "rebellions.ai/npu.driver-version=0.5.0\n"
		  "rebellions.ai/npu.chiplet-count=1\n");
	EXPECT_EQ(nfd_features({}, ""), "rebellions.ai/npu.present=false\nrebellions.ai/npu.count=0\n");
}
