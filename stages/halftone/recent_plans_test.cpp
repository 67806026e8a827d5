// RecentPlans: one make per key for concurrent callers, failures not kept,
// the oldest key dropped beyond `keep`.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <stdexcept>
#include <thread>
#include <vector>

#include "stages/halftone/recent_plans.h"

namespace sp::halftone {
namespace {

TEST(RecentPlans, ConcurrentCallersShareOneMake) {
  RecentPlans<int, std::vector<int>> plans(4);
  std::atomic<int> made{0};
  std::vector<std::thread> threads;
  std::vector<std::shared_ptr<const std::vector<int>>> got(8);
  for (int t = 0; t < 8; ++t)
    threads.emplace_back([&, t] {
      got[t] = plans.get(7, [&] {
        ++made;
        std::this_thread::sleep_for(std::chrono::milliseconds(50));  // the others arrive meanwhile
        return std::vector<int>{1, 2, 3};
      });
    });
  for (auto& t : threads) t.join();
  EXPECT_EQ(made.load(), 1);
  for (const auto& g : got) EXPECT_EQ(g.get(), got[0].get());
  EXPECT_EQ(*got[0], (std::vector<int>{1, 2, 3}));
}

TEST(RecentPlans, FailureIsRethrownAndNotKept) {
  RecentPlans<int, int> plans(4);
  EXPECT_THROW(plans.get(1, []() -> int { throw std::runtime_error("bad settings"); }), std::runtime_error);
  EXPECT_EQ(*plans.get(1, [] { return 5; }), 5);
}

TEST(RecentPlans, KeepsOnlyTheLatestKeys) {
  RecentPlans<int, int> plans(2);
  int made = 0;
  const auto make = [&] { return ++made; };
  plans.get(1, make);
  plans.get(2, make);
  plans.get(1, make);  // kept
  EXPECT_EQ(made, 2);
  plans.get(3, make);  // drops 1
  plans.get(1, make);
  EXPECT_EQ(made, 4);
}

}  // namespace
}  // namespace sp::halftone
