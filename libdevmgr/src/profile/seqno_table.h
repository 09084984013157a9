// A device file's jobs waiting for their device times, by seqno.  The seqnos
// of one open file are 1, 2, 3, ...: a slot per seqno from the oldest
// waiting one makes matching a JOB_TIMES record an index, not a sort and a
// search.  Jobs whose record never comes (the driver dropped it, or it is
// still running) would hold the table open: past a bound they move to a
// short sorted side list, searched only for seqnos before the table.
#pragma once

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "rbln/abi_namespace.hpp"

RBLN_CXX_ABI_BEGIN namespace profile::detail {

template <typename T>
class SeqnoTable {
public:
	// Slots beyond the oldest waiting job: past this, the older half's waiting
	// ones go to the side list (the driver keeps 4096 records; 256 run at once).
	static constexpr size_t kSpan = 16384;

	size_t waiting() const { return waiting_; }
	bool empty() const { return waiting_ == 0; }

	void add(uint64_t seqno, T *item)
	{
		waiting_++;
		// Nearly always: the seqno after the last one, with room.
		if (seqno - base_ == slots_.size() && slots_.size() < slots_.capacity() &&
		    head_ < slots_.size()) [[likely]] {
			slots_.push_back(item);
			return;
		}
		if (head_ == slots_.size()) {	// nothing in the table: it starts here
			slots_.clear();
			head_ = 0;
			base_ = seqno;
		}
		if (seqno < base_ + head_) {	// recorded late, after later jobs were matched
			stragglers_.insert(std::ranges::upper_bound(stragglers_, seqno, {},
								    &Entry::first), {seqno, item});
			return;
		}
		uint64_t i = seqno - base_;
		if (i >= head_ + kSpan)		// a leap (jobs not recorded in between)
			i = shed(seqno);
		if (i < slots_.size()) {
			slots_[i] = item;
			return;
		}
		// Nearly always the next seqno: a push_back, not a resize (a call).
		if (i > slots_.size())
			slots_.resize(i, nullptr);
		slots_.push_back(item);
	}

	// The job waiting as @seqno, no longer waiting; nullptr: none.
	T *take(uint64_t seqno)
	{
		T *item = nullptr;
		if (seqno >= base_ + head_ && seqno - base_ < slots_.size()) {
			item = std::exchange(slots_[seqno - base_], nullptr);
		} else if (!stragglers_.empty()) {
			auto it = std::ranges::lower_bound(stragglers_, seqno, {}, &Entry::first);
			if (it != stragglers_.end() && it->first == seqno) {
				item = it->second;
				stragglers_.erase(it);
			}
		}
		if (item)
			waiting_--;
		return item;
	}

	// After a round of take(): the slots of matched jobs at the front go.
	void trim()
	{
		while (head_ < slots_.size() && !slots_[head_])
			head_++;
		if (slots_.size() - head_ > kSpan)
			shed(base_ + slots_.size());
		// Dropped in bulk, not one by one from the front.
		if (head_ > slots_.size() / 2) {
			slots_.erase(slots_.begin(), slots_.begin() + ptrdiff_t(head_));
			base_ += head_;
			head_ = 0;
		}
	}

private:
	using Entry = std::pair<uint64_t, T *>;

	// Moves the waiting jobs more than kSpan / 2 before @seqno to the side
	// list, and returns @seqno's slot.
	uint64_t shed(uint64_t seqno)
	{
		const uint64_t keep_from = seqno - std::min<uint64_t>(seqno, kSpan / 2);
		while (head_ < slots_.size() && base_ + head_ < keep_from) {
			if (T *item = slots_[head_])
				stragglers_.push_back({base_ + head_, item});
			head_++;
		}
		if (head_ == slots_.size()) {
			slots_.clear();
			head_ = 0;
			base_ = keep_from;
		}
		return seqno - base_;
	}

	uint64_t base_ = 0;		// the seqno of slots_[0]
	size_t head_ = 0;		// slots before it are empty
	std::vector<T *> slots_;
	std::vector<Entry> stragglers_;	// by seqno, all before base_ + head_
	size_t waiting_ = 0;
};

} RBLN_CXX_ABI_END // namespace rbln::profile::detail
