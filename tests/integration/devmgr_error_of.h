// What a libdevmgr call throws, for tests of its error codes and messages.
#pragma once

#include <string>

#include <gtest/gtest.h>

#include "rbln/devmgr.hpp"

namespace rbln::test {

// Runs @f, expects an rbln::Error with @code, returns its message.
template <typename F>
std::string error_of(F &&f, rbln::Errc code)
{
	try {
		f();
	} catch (const rbln::Error &e) {
		EXPECT_EQ(e.code(), code) << e.what();
		return e.what();
	}
	ADD_FAILURE() << "no error thrown";
	return {};
}

} // namespace rbln::test
