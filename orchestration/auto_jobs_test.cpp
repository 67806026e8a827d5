// --jobs auto's arithmetic, on random hosts: each of its bounds holds, more
// of anything never gives fewer workers, and temporal stages get longer
// segments. (tests/segments_e2e_test.cpp runs the CLI's --jobs auto.)
#include "orchestration/auto_jobs.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "tests/support/test_support.h"

namespace sp {
namespace {

AutoJobsHost random_host(std::mt19937_64& rng) {
  AutoJobsHost h;
  h.gpus = int(rng() % 9);
  h.cores = 1 + int(rng() % 256);
  h.input_seconds = rng() % 8 ? double(rng() % 100000) / 10 : -1;
  h.temporal = rng() % 2;
  return h;
}

TEST(AutoJobs, BoundsHoldAndMoreNeverGivesFewer) {
  std::mt19937_64 rng(test::fresh_seed());
  for (int round = 0; round < 2000; ++round) {
    const AutoJobsHost h = random_host(rng);
    const AutoJobs a = choose_jobs(h);
    SCOPED_TRACE(a.why);
    ASSERT_GE(a.jobs, 1);
    if (h.gpus > 0) {
      EXPECT_LE(a.jobs, 4 * h.gpus) << "more than four workers a GPU";
      EXPECT_LE(a.jobs, std::max(1, h.cores / 8)) << "more workers than the cores encode for";
    } else {
      EXPECT_LE(a.jobs, std::max(1, h.cores / 16));
    }
    if (h.input_seconds >= 0) EXPECT_LE(a.jobs, std::max(1, int(h.input_seconds / (h.temporal ? 60 : 20))));
    AutoJobsHost more = h;
    more.cores += int(rng() % 64);
    more.gpus += h.gpus > 0 ? int(rng() % 4) : 0;
    if (more.input_seconds >= 0) more.input_seconds += double(rng() % 1000);
    EXPECT_GE(choose_jobs(more).jobs, a.jobs) << choose_jobs(more).why;
    AutoJobsHost temporal = h;
    temporal.temporal = true;
    EXPECT_LE(choose_jobs(temporal).jobs, a.jobs);
    EXPECT_NE(a.why.find(std::to_string(a.jobs) + " worker"), std::string::npos);
  }
}

TEST(AutoJobs, TheMeasuredHostGetsWhatWasFastest) {
  // 2 x H100, 32 cores, a 60 s clip: 4 workers on one GPU were the fastest (docs/perf.md).
  EXPECT_EQ(choose_jobs({1, 32, 3600, false}).jobs, 4);
  EXPECT_EQ(choose_jobs({2, 32, 3600, false}).jobs, 4);  // the encoders' cores, not the GPUs, bound it
  EXPECT_EQ(choose_jobs({1, 32, 30, false}).jobs, 1);    // a short clip: a single run
  EXPECT_EQ(choose_jobs({0, 2, 3600, false}).jobs, 1);   // CI's two cores
}

}  // namespace
}  // namespace sp
