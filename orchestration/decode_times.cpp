#include "orchestration/decode_times.h"

#include <algorithm>

#include "pipeline/errors.h"

namespace sp {

DecodeTimes::DecodeTimes(int reorder_delay) : delay_(std::max(reorder_delay, 0)) {}

void DecodeTimes::add(int64_t pts) {
  if (finished_) throw Error(ExitCode::internal, "decode times: a packet after the end");
  not_shown_.push(pts);
  ++added_;
  // A decoder d frames behind shows the earliest frame it holds now.
  if (added_ > delay_) present_earliest();
}

void DecodeTimes::present_earliest() {
  const int64_t shown = not_shown_.top();
  not_shown_.pop();
  if (int64_t(first_shown_.size()) <= delay_) first_shown_.push_back(shown);
  if (!finished_) later_.push_back(shown);
  if (int64_t(first_shown_.size()) == delay_ + 1 && leading_.empty()) {
    // Frame d's distance from frame 0 is how early the first d packets are decoded.
    const int64_t early = first_shown_.back() - first_shown_.front();
    for (int i = 0; i < delay_; ++i) leading_.push_back(first_shown_[size_t(i)] - early);
  }
}

void DecodeTimes::finish() {
  if (finished_) return;
  finished_ = true;
  while (!not_shown_.empty() && int64_t(first_shown_.size()) <= delay_) present_earliest();
  // A stream of d frames or fewer has nothing to reorder: decoded as shown.
  if (leading_.empty())
    for (int64_t i = 0; i < std::min<int64_t>(delay_, added_); ++i) leading_.push_back(first_shown_[size_t(i)]);
}

bool DecodeTimes::ready() const {
  if (taken_ == added_) return false;
  return taken_ < delay_ ? !leading_.empty() : !later_.empty();
}

int64_t DecodeTimes::take() {
  if (!ready()) throw Error(ExitCode::internal, "decode times: taken before it is known");
  if (taken_ < delay_) return leading_[size_t(taken_++)];
  ++taken_;
  const int64_t t = later_.front();
  later_.pop_front();
  return t;
}

}  // namespace sp
