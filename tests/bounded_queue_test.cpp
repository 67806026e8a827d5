#include "pipeline/bounded_queue.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <random>
#include <thread>
#include <vector>

#include "tests/support/test_support.h"

namespace sp {
namespace {

using namespace std::chrono_literals;

TEST(BoundedQueue, PreservesOrderAcrossThreads) {
  std::mt19937_64 rng(test::fresh_seed());
  const int n = 1000 + int(rng() % 4000);
  BoundedQueue<int> q(1 + rng() % 8);
  std::thread producer([&] {
    for (int i = 0; i < n; ++i) ASSERT_TRUE(q.push(i));
    q.close();
  });
  int expected = 0;
  while (auto v = q.pop()) ASSERT_EQ(*v, expected++);
  producer.join();
  EXPECT_EQ(expected, n);
  EXPECT_LE(q.high_water(), q.capacity());
}

TEST(BoundedQueue, LoweredCapacityHoldsProducersUntilTheQueueDrains) {
  BoundedQueue<int> q(8);  // a start-up read-ahead
  for (int i = 0; i < 6; ++i) ASSERT_TRUE(q.push(i));
  q.set_capacity(2);
  std::atomic<bool> pushed{false};
  std::thread producer([&] {
    q.push(6);
    pushed = true;
  });
  std::this_thread::sleep_for(50ms);
  EXPECT_FALSE(pushed) << "6 items queued, capacity now 2";
  for (int expected = 0; expected < 5; ++expected) ASSERT_EQ(*q.pop(), expected);
  producer.join();  // 1 left, so the push went through
  EXPECT_TRUE(pushed);
  EXPECT_EQ(*q.pop(), 5);
  EXPECT_EQ(*q.pop(), 6);
}

TEST(BoundedQueue, BlockingPolicyAppliesBackpressure) {
  BoundedQueue<int> q(2);
  std::atomic<int> pushed{0};
  std::thread producer([&] {
    for (int i = 0; i < 5; ++i) {
      q.push(i);
      ++pushed;
    }
  });
  std::this_thread::sleep_for(50ms);
  EXPECT_EQ(pushed.load(), 2) << "producer ran ahead of a full queue";
  for (int i = 0; i < 5; ++i) EXPECT_EQ(*q.pop(), i);
  producer.join();
  EXPECT_EQ(q.dropped(), 0u);
}

TEST(BoundedQueue, DropOldestKeepsNewestAndCounts) {
  std::mt19937_64 rng(test::fresh_seed());
  const size_t cap = 1 + rng() % 5;
  const int n = int(cap) + 1 + int(rng() % 50);
  BoundedQueue<int> q(cap, OverflowPolicy::drop_oldest);
  for (int i = 0; i < n; ++i) ASSERT_TRUE(q.push(i));  // never blocks
  EXPECT_EQ(q.dropped(), uint64_t(n - int(cap)));
  q.close();
  std::vector<int> left;
  while (auto v = q.pop()) left.push_back(*v);
  ASSERT_EQ(left.size(), cap);
  for (size_t i = 0; i < cap; ++i) EXPECT_EQ(left[i], n - int(cap) + int(i));
}

TEST(BoundedQueue, CloseWakesBlockedProducerAndConsumer) {
  BoundedQueue<int> full(1);
  full.push(1);
  std::thread producer([&] { EXPECT_FALSE(full.push(2)); });
  BoundedQueue<int> empty(1);
  std::thread consumer([&] { EXPECT_FALSE(empty.pop().has_value()); });
  std::this_thread::sleep_for(20ms);
  full.close();
  empty.close();
  producer.join();
  consumer.join();
  EXPECT_EQ(*full.pop(), 1);  // what was queued before close is still delivered
}

}  // namespace
}  // namespace sp
