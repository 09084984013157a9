// A few elements without allocating, any number with: what SUBMIT points at
// (copies, in_syncs, a batch's elements), as nearly every job has one or two.
#pragma once

#include <array>
#include <cstddef>
#include <span>
#include <vector>

#include "rbln/abi_namespace.hpp"

RBLN_CXX_ABI_BEGIN namespace detail {

template <typename T, size_t N>
class SmallVector {
public:
	explicit SmallVector(size_t n = 0) { resize(n); }

	void resize(size_t n)
	{
		if (n > N && many_.empty())
			many_.assign(few_.begin(), few_.begin() + size_);
		if (!many_.empty() || n > N)
			many_.resize(n);
		size_ = n;
	}
	void push_back(const T &value)
	{
		resize(size_ + 1);
		span().back() = value;
	}
	size_t size() const { return size_; }
	bool empty() const { return size_ == 0; }
	std::span<T> span() { return many_.empty() ? std::span(few_).first(size_) : std::span(many_); }
	std::span<const T> span() const
	{
		return many_.empty() ? std::span(few_).first(size_) : std::span(many_);
	}

private:
	std::array<T, N> few_;
	size_t size_ = 0;
	std::vector<T> many_;	// past N: all of them
};

} RBLN_CXX_ABI_END // namespace rbln::detail
