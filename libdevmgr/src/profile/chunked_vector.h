// A vector that grows by fixed chunks and never moves what it holds: the
// profiler's job records, appended on the submit path for as long as the
// process runs.  A std::vector doubles instead, copying every record and
// touching twice the memory it keeps (each new page a fault), a cost that
// lands on whichever submit makes it grow.
#pragma once

#include <cstddef>
#include <memory>
#include <new>
#include <type_traits>
#include <vector>

#include "rbln/abi_namespace.hpp"

RBLN_CXX_ABI_BEGIN namespace profile::detail {

template <typename T, size_t kChunk = 1024>
class ChunkedVector {
public:
	ChunkedVector() = default;
	ChunkedVector(const ChunkedVector &) = delete;
	ChunkedVector &operator=(const ChunkedVector &) = delete;
	~ChunkedVector()
	{
		if constexpr (!std::is_trivially_destructible_v<T>)
			for (size_t i = 0; i < size_; i++)
				std::destroy_at(&(*this)[i]);
	}

	size_t size() const { return size_; }
	bool empty() const { return size_ == 0; }
	T &operator[](size_t i) { return *std::launder(reinterpret_cast<T *>(slot(i))); }
	const T &operator[](size_t i) const
	{
		return *std::launder(reinterpret_cast<const T *>(slot(i)));
	}

	// A new element, value-initialised; references to the others stay valid.
	T &emplace_back()
	{
		// A chunk comes uninitialised: each element is made when appended,
		// not all 1024 (zeroed, then constructed) on the submit that needs a chunk.
		if (size_ % kChunk == 0)
			chunks_.push_back(std::make_unique_for_overwrite<Slot[]>(kChunk));
		T *t = ::new (static_cast<void *>(slot(size_))) T();
		size_++;
		return *t;
	}

private:
	struct Slot {
		alignas(T) std::byte bytes[sizeof(T)];
	};
	Slot *slot(size_t i) const { return &chunks_[i / kChunk][i % kChunk]; }

	std::vector<std::unique_ptr<Slot[]>> chunks_;
	size_t size_ = 0;
};

} RBLN_CXX_ABI_END // namespace rbln::profile::detail
