#include "pipeline/parallel.h"

#include <gtest/gtest.h>

#include <atomic>
#include <random>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
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

TEST(ParallelFor, ScopedPoolsDecideTheThreads) {
  std::mt19937_64 rng(test::fresh_seed());
  const int shared = worker_count();
  for (int threads : {1, 2, 3}) {
    WorkerPool own(threads);
    const int n = 1000 + int(rng() % 5000);
    std::vector<std::atomic<int>> hits(n);
    std::mutex mutex;
    std::set<std::thread::id> seen;
    {
      const ScopedWorkerPool scope(&own);
      EXPECT_EQ(worker_count(), threads);
      parallel_for(n, [&](int b, int e) {
        {
          std::lock_guard lock(mutex);
          seen.insert(std::this_thread::get_id());
        }
        for (int i = b; i < e; ++i) hits[i]++;
      });
    }
    for (int i = 0; i < n; ++i) ASSERT_EQ(hits[i].load(), 1) << "index " << i << " of " << n;
    EXPECT_LE(int(seen.size()), threads);
    if (threads == 1) {
      EXPECT_EQ(*seen.begin(), std::this_thread::get_id()) << "a pool of one runs on its caller";
    }
    EXPECT_EQ(worker_count(), shared) << "the scope's end gives the shared pool back";
  }
}

}  // namespace
}  // namespace sp
