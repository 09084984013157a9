// A vector that grows by fixed chunks and never moves what it holds: the
// profiler's job records, appended on the submit path for as long as the
// process runs.  A std::vector doubles instead, copying every record and
// touching twice the memory it keeps (each new page a fault), a cost that
// lands on whichever submit makes it grow.
#pragma once

#include <cstddef>
#include <memory>
#include <vector>

#include "rbln/abi_namespace.hpp"

RBLN_CXX_ABI_BEGIN namespace profile::detail {

template <typename T, size_t kChunk = 1024>
class ChunkedVector {
public:
	size_t size() const { return size_; }
	bool empty() const { return size_ == 0; }
	T &operator[](size_t i) { return chunks_[i / kChunk][i % kChunk]; }
	const T &operator[](size_t i) const { return chunks_[i / kChunk][i % kChunk]; }

	// A new element, value-initialised; references to the others stay valid.
	T &emplace_back()
	{
		if (size_ % kChunk == 0)
			chunks_.push_back(std::make_unique<T[]>(kChunk));
		return (*this)[size_++];
	}

private:
	std::vector<std::unique_ptr<T[]>> chunks_;
	size_t size_ = 0;
};

} RBLN_CXX_ABI_END // namespace rbln::profile::detail
