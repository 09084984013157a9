// The C ABI of the profiler: rbln::profile::Session as begin/end by run
// number.  Same conventions as c_api.cpp.
#include <map>
#include <memory>
#include <mutex>

#include "c_api_guard.h"
#include "rbln/profile.hpp"

using rbln::capi::guarded;
using rbln::capi::invalid;

namespace {

std::mutex g_mu;
std::map<unsigned, std::unique_ptr<rbln::profile::Session>> g_sessions;

rbln_status put_text(const std::string &text, char *buf, size_t size, const char *what)
{
	if (text.size() >= size) {
		rbln::capi::last_error() = fmt::format("{}: {} bytes are too few for \"{}\" ({} needed)",
						       what, size, text, text.size() + 1);
		return RBLN_ERR_INVALID_ARGUMENT;
	}
	std::memcpy(buf, text.c_str(), text.size() + 1);
	return RBLN_OK;
}

} // namespace

rbln_status rbln_profile_begin(const char *output_dir, unsigned *run)
{
	if (!run)
		return invalid("rbln_profile_begin: run is NULL");
	return guarded([&] {
		auto s = std::make_unique<rbln::profile::Session>(output_dir ? output_dir : "");
		std::lock_guard lock(g_mu);
		*run = s->run();
		g_sessions[*run] = std::move(s);
	});
}

rbln_status rbln_profile_end(unsigned run, char *path, size_t path_size)
{
	if (!path || !path_size)
		return invalid("rbln_profile_end: path is NULL or path_size 0");
	std::unique_ptr<rbln::profile::Session> s;
	{
		std::lock_guard lock(g_mu);
		auto it = g_sessions.find(run);
		if (it == g_sessions.end()) {
			rbln::capi::last_error() = fmt::format("rbln_profile_end: run {} was not begun by "
							       "rbln_profile_begin, or has ended", run);
			return RBLN_ERR_INVALID_ARGUMENT;
		}
		s = std::move(it->second);
		g_sessions.erase(it);
	}
	std::string file;
	rbln_status st = guarded([&] { file = s->end(); });
	return st != RBLN_OK ? st : put_text(file, path, path_size, "rbln_profile_end");
}

rbln_status rbln_profile_label(unsigned instance, unsigned sequence, unsigned workload, char *buf,
			       size_t buf_size)
{
	if (!buf || !buf_size)
		return invalid("rbln_profile_label: buf is NULL or buf_size 0");
	return put_text(rbln::profile::label(instance, sequence, workload), buf, buf_size,
			"rbln_profile_label");
}
