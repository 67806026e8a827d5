#include "pipeline/cores.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/test_support.h"

namespace sp::test {
namespace {

TEST(CoresOfCpuMax, AQuotaIsWorthItsWholeCoresRoundedUp) {
  std::mt19937_64 rng(fresh_seed());
  for (int i = 0; i < 200; ++i) {
    const long long period = 1000 + static_cast<long long>(rng() % 1000000);
    const long long quota = 1 + static_cast<long long>(rng() % uint64_t(64 * period));
    const long long whole = (quota + period - 1) / period;
    const std::string text = std::to_string(quota) + " " + std::to_string(period) + "\n";
    ASSERT_EQ(cores_of_cpu_max(text), std::optional<int>(int(whole))) << text;
  }
  EXPECT_EQ(cores_of_cpu_max("max 100000\n"), std::nullopt) << "no limit";
  EXPECT_EQ(cores_of_cpu_max(""), std::nullopt);
  EXPECT_EQ(cores_of_cpu_max("250000"), std::nullopt);
  EXPECT_EQ(cores_of_cpu_max("-5 100000"), std::nullopt);
  EXPECT_EQ(cores_of_cpu_max("50000 0"), std::nullopt);
  EXPECT_EQ(cores_of_cpu_max("50000 100000x"), std::nullopt);
}

// What `taskset` or a Slurm job's cpuset leaves the process, not the
// machine's count: checked on a thread of its own, whose mask is its own.
TEST(UsableCores, FollowTheThreadsAffinityMaskAndSoDoTheThreadShares) {
  const std::vector<int> cpus = allowed_cpus();
  ASSERT_FALSE(cpus.empty());
  const int unrestricted = usable_cores();
  EXPECT_LE(unrestricted, int(cpus.size()));
  EXPECT_GE(unrestricted, 1);
  std::mt19937_64 rng(fresh_seed());
  std::thread([&] {
    for (size_t n = 1; n <= std::min<size_t>(cpus.size(), 3); ++n) {
      std::vector<int> some = cpus;
      std::shuffle(some.begin(), some.end(), rng);
      some.resize(n);
      ASSERT_TRUE(run_this_thread_on(some));
      const int cores = std::min(int(n), unrestricted);
      EXPECT_EQ(usable_cores(), cores) << n << " CPUs allowed";
      for (int jobs : {1, 2, 3, 8})  // 1.5 threads a core of each one's share, at least one
        EXPECT_EQ(threads_each(jobs), std::max(1, int(std::lround(1.5 * cores / jobs)))) << jobs << " jobs, " << n << " CPUs";
    }
  }).join();
  EXPECT_EQ(usable_cores(), unrestricted) << "another thread's mask is its own";
}

}  // namespace
}  // namespace sp::test
