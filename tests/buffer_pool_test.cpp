#include "pipeline/buffer_pool.h"

#include <gtest/gtest.h>

#include <random>

#include "tests/support/test_support.h"

namespace sp {
namespace {

BufferPool::Key frame_key(int w, int h) {
  return {MemoryKind::host, w, h, 0, size_t(w) * h * 4};
}

// Simulates the per-frame pattern of the pipeline: K frames in flight, each
// acquiring an input, an output and scratch buffer, released in order.
void run_frames(BufferPool& pool, int frames, int w, int h, std::mt19937_64& rng) {
  std::vector<PooledBuffer> in_flight;
  const size_t k = 1 + rng() % 4;
  for (int f = 0; f < frames; ++f) {
    PooledBuffer in(pool, frame_key(w, h));
    PooledBuffer out(pool, frame_key(w * 2, h * 2));
    in.data()[0] = static_cast<uint8_t>(f);  // touch memory: it must be real
    in_flight.push_back(std::move(out));
    if (in_flight.size() > k) in_flight.erase(in_flight.begin());
  }
}

TEST(BufferPool, NoAllocationAfterWarmUpOver200Frames) {
  std::mt19937_64 rng(test::fresh_seed());
  BufferPool pool;
  run_frames(pool, 10, 64, 48, rng);
  const uint64_t misses_after_warmup = pool.stats().misses;
  EXPECT_GT(misses_after_warmup, 0u);
  std::mt19937_64 same(1);
  run_frames(pool, 200, 64, 48, same);
  const PoolStats s = pool.stats();
  // K may differ between the two runs; allow the warm-up to grow to the larger K only.
  EXPECT_LE(s.misses, misses_after_warmup + 5);
  std::mt19937_64 again(1);
  const uint64_t before = pool.stats().misses;
  run_frames(pool, 200, 64, 48, again);
  EXPECT_EQ(pool.stats().misses, before) << "a repeated 200-frame run allocated";
  EXPECT_GE(pool.stats().hits, 400u);
}

TEST(BufferPool, ResolutionChangeAndBackReleasesStalePool) {
  std::mt19937_64 rng(test::fresh_seed());
  BufferPool pool;
  std::mt19937_64 r1(7);
  run_frames(pool, 20, 64, 48, r1);
  const PoolStats first = pool.stats();
  std::mt19937_64 r2(7);
  run_frames(pool, 20, 32, 16, r2);
  pool.trim_except(32, 16);
  // Only the output key 64x32 of the new size family survives besides 32x16... both are new-size keys.
  EXPECT_GT(pool.stats().freed, 0u);
  EXPECT_LT(pool.stats().bytes_live, first.bytes_live + size_t(64) * 32 * 4 * 8);
  std::mt19937_64 r3(7);
  run_frames(pool, 20, 64, 48, r3);
  const uint64_t misses_back = pool.stats().misses;
  std::mt19937_64 r4(7);
  run_frames(pool, 200, 64, 48, r4);
  EXPECT_EQ(pool.stats().misses, misses_back) << "steady state after switching back allocated";
}

TEST(BufferPool, ScratchIsReturnedOnRelease) {
  BufferPool pool;
  {
    PooledScratch scratch(pool, MemoryKind::host);
    void* a = scratch.allocate(1000);
    ASSERT_NE(a, nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(a) % 256, 0u);
  }
  PooledScratch again(pool, MemoryKind::host);
  again.allocate(1000);
  EXPECT_EQ(pool.stats().misses, 1u);
  EXPECT_EQ(pool.stats().hits, 1u);
}

}  // namespace
}  // namespace sp
