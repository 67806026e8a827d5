#include "pipeline/parallel.h"

#include <gtest/gtest.h>

#include <atomic>
#include <random>
#include <stdexcept>
#include <vector>

#include "tests/support/test_support.h"

namespace sp {
namespace {

TEST(ParallelFor, CoversEveryIndexExactlyOnce) {
  std::mt19937_64 rng(test::fresh_seed());
  for (int trial = 0; trial < 20; ++trial) {
    const int n = 1 + int(rng() % 5000);
    std::vector<std::atomic<int>> hits(n);
    parallel_for(n, [&](int b, int e) {
      for (int i = b; i < e; ++i) hits[i]++;
    });
    for (int i = 0; i < n; ++i) ASSERT_EQ(hits[i].load(), 1) << "index " << i << " of " << n;
  }
}

TEST(ParallelFor, PropagatesExceptions) {
  EXPECT_THROW(parallel_for(100, [](int, int e) {
                 if (e == 100) throw std::runtime_error("boom");
               }),
               std::runtime_error);
  // The pool stays usable afterwards.
  std::atomic<int> sum{0};
  parallel_for(10, [&](int b, int e) { sum += e - b; });
  EXPECT_EQ(sum.load(), 10);
}

}  // namespace
}  // namespace sp
