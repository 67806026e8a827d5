// --jobs auto's arithmetic, on random hosts: each of its bounds holds, more
// of anything never gives fewer workers, and more warm-up never gives more. (tests/segments_e2e_test.cpp runs the CLI's --jobs auto.)
#include "orchestration/auto_jobs.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "orchestration/batch_segments.h"
#include "orchestration/segment_plan.h"
#include "pipeline/config.h"
#include "tests/support/test_support.h"

namespace sp {
namespace {

AutoJobsHost random_host(std::mt19937_64& rng) {
  AutoJobsHost h;
  h.gpus = int(rng() % 9);
  h.cores = 1 + int(rng() % 256);
  h.input_seconds = rng() % 8 ? double(rng() % 100000) / 10 : -1;
  h.warmup_seconds = rng() % 2 ? double(rng() % 3000) / 1000 : 0.0;
  h.clips = rng() % 3 ? 0 : 2 + int(rng() % 300);
  h.gpu_time_unknown = rng() % 4 == 0;
  return h;
}

TEST(AutoJobs, BoundsHoldAndMoreNeverGivesFewer) {
  std::mt19937_64 rng(test::fresh_seed());
  for (int round = 0; round < 2000; ++round) {
    const AutoJobsHost h = random_host(rng);
    const AutoJobs a = choose_jobs(h);
    SCOPED_TRACE(a.why);
    ASSERT_GE(a.jobs, 1);
    if (h.clips > 0) {
      EXPECT_LE(a.jobs, h.clips) << "more clips at a time than there are";
      if (h.gpus > 0) {
        EXPECT_LE(a.jobs, 8 * h.gpus) << "more than eight clips a GPU";
        EXPECT_LE(a.jobs, std::max(1, h.cores / 2)) << "clips with under two cores each";
      } else {
        EXPECT_LE(a.jobs, std::max(1, h.cores / 16));
      }
      EXPECT_NE(a.why.find(std::to_string(h.clips) + " clip"), std::string::npos);
    } else if (h.gpus > 0) {
      EXPECT_LE(a.jobs, (h.gpu_time_unknown && h.gpus > 1 ? 1 : 4) * h.gpus) << "more workers a GPU than it takes";
      EXPECT_LE(a.jobs, std::max(1, h.cores / 8)) << "more workers than the cores encode for";
    } else {
      EXPECT_LE(a.jobs, std::max(1, h.cores / 16));
    }
    // Each worker gets 10 s of input at least, and 20 times the warm-up (5% of its segment), but
    // a worker of a GPU of its own, whose warm-up runs beside the others.
    if (h.input_seconds >= 0 && h.clips == 0) {
      EXPECT_LE(a.jobs, std::max(1, int(h.input_seconds / 10)));
      if (h.gpus < 2 || a.jobs > h.gpus) {
        EXPECT_LE(a.jobs, std::max(1, int(h.input_seconds / std::max(10.0, 20 * h.warmup_seconds))));
      }
    }
    if (h.clips == 0 && h.gpus > 1 && a.jobs > h.gpus) {
      EXPECT_EQ(a.jobs % h.gpus, 0) << "workers sharing some GPUs but not others";
    }
    AutoJobsHost more = h;
    more.cores += int(rng() % 64);
    if (more.clips > 0) more.clips += int(rng() % 100);
    if (more.input_seconds >= 0) more.input_seconds += double(rng() % 1000);
    EXPECT_GE(choose_jobs(more).jobs, a.jobs) << choose_jobs(more).why;
    // More GPUs may take a worker that would share one away, never a GPU at work.
    more.gpus += h.gpus > 0 ? int(rng() % 4) : 0;
    const int gpus_at_work = h.gpus > 0 ? std::min(a.jobs, h.gpus) : 0;
    EXPECT_GE(std::min(choose_jobs(more).jobs, more.gpus), gpus_at_work) << choose_jobs(more).why;
    AutoJobsHost warmer = h;
    warmer.warmup_seconds += double(rng() % 2000) / 1000;
    EXPECT_LE(choose_jobs(warmer).jobs, a.jobs) << choose_jobs(warmer).why;
    EXPECT_NE(a.why.find(std::to_string(a.jobs) + " worker"), std::string::npos);
  }
}

// A warm-up that costs the busiest resource less than the frames it leads
// to (sp::warmup_weight) lets segments be shorter, never longer.
TEST(AutoJobs, AWarmUpThatWeighsLessNeverGivesFewerWorkers) {
  std::mt19937_64 rng(test::fresh_seed());
  for (int round = 0; round < 2000; ++round) {
    AutoJobsHost h = random_host(rng);
    h.clips = 0;
    h.warmup_weight = double(rng() % 1001) / 1000;
    const AutoJobs a = choose_jobs(h);
    AutoJobsHost whole = h;
    whole.warmup_weight = 1;
    EXPECT_GE(a.jobs, choose_jobs(whole).jobs) << a.why;
    if (h.input_seconds >= 0 && (h.gpus < 2 || a.jobs > h.gpus)) {
      EXPECT_LE(a.jobs, std::max(1, int(h.input_seconds / std::max(10.0, 20 * h.warmup_seconds * h.warmup_weight))))
          << a.why;
    }
    const bool weighed = h.warmup_weight < 1 && h.warmup_seconds > 0 && h.input_seconds >= 0;
    EXPECT_EQ(a.why.find("of an encoded frame's cost") != std::string::npos, weighed) << a.why;
  }
}

TEST(AutoJobs, TheMeasuredHostsGetWhatWasFastest) {
  // docs/perf.md. 2 x H100, 32 cores, a 60 s clip: 4 workers on one GPU were the fastest.
  EXPECT_EQ(choose_jobs({1, 32, 3600, 0}).jobs, 4);
  EXPECT_EQ(choose_jobs({2, 32, 3600, 0}).jobs, 4);  // the encoders' cores, not the GPUs, bound it
  // A 40 s 1080p60 clip through pencil (28 warm-up frames: 0.47 s). One H200,
  // 16 cores: 2 and 4 workers 750 fps, a single run 582. 2 x H200, 32 cores:
  // 4 workers 902 fps, a single run 555.
  const double pencil_warmup = warmup_seconds_at(Warmup{28, 0}, 60);
  EXPECT_NEAR(pencil_warmup, 28.0 / 60, 1e-9);
  EXPECT_EQ(choose_jobs({1, 16, 40, pencil_warmup}).jobs, 2);
  EXPECT_EQ(choose_jobs({1, 32, 40, pencil_warmup}).jobs, 4);
  // The GPU-bound halftone chain (a frame, and 0.5 s handed over at each
  // seam), the same clip, one H200: 2 workers 174 fps, 4 171, a single run 156.
  EXPECT_EQ(choose_jobs({1, 16, 40, warmup_seconds_at(Warmup{1, 0.5}, 60)}).jobs, 2);
  // lowpoly's temporal mesh (2.17 s of warm-up a segment at 60 fps) into x264
  // ultrafast, a 40 s clip, one H200 with 16 cores: a single run 600-623 fps,
  // 2 workers 881-891, 4 855-908 (session 37). Weighed as a whole frame's
  // cost, its warm-up gave it one worker; weighed at what it takes of the
  // GPU while the encoders are the limit (gpu_need_test.cpp), two.
  const double lowpoly_warmup = warmup_seconds_at(
      chain_warmup(parse_config("pipeline:\n  - lowpoly: {temporal: true, color_smoothing: 0.5}\n", "l.yaml")), 60);
  EXPECT_NEAR(lowpoly_warmup, 2.17, 0.01);
  EXPECT_EQ(choose_jobs({1, 16, 40, lowpoly_warmup}).jobs, 1);
  EXPECT_EQ(choose_jobs({1, 16, 40, lowpoly_warmup, 0, 0.4}).jobs, 2);
  // A GPU-bound chain with halftone_gpu_bound's 0.53 s warm-up (10.7 s a worker) on 4 H200s and 64 cores: a 60 s
  // clip is worth 5 workers, but 5 on 4 GPUs put two segments on GPU 0, which ends the run at 2.5 GPUs' worth
  // (2 x H200, halftone 60 s: 3 workers 294 fps, 2 workers 385). The 6,150 frames (102.5 s): 8.
  const double halftone_warmup = warmup_seconds_at(Warmup{1, 0.5}, 60);
  EXPECT_EQ(choose_jobs({4, 64, 60, halftone_warmup}).jobs, 4);
  EXPECT_NE(choose_jobs({4, 64, 60, halftone_warmup}).why.find("1 fewer for a multiple of the GPUs"), std::string::npos);
  EXPECT_EQ(choose_jobs({4, 64, 102.5, halftone_warmup}).jobs, 8);
  EXPECT_EQ(choose_jobs({2, 32, 60, halftone_warmup}).jobs, 4);
  // halftone itself bounds no GPU time: over several GPUs, one worker a GPU (2 x H200: 398-400 fps on 6,150
  // frames and 385 on 60 s, against 388 and 354 with two a GPU); on one GPU as before.
  EXPECT_EQ(choose_jobs({2, 32, 102.5, halftone_warmup, 0, 1, true}).jobs, 2);
  EXPECT_EQ(choose_jobs({2, 32, 60, halftone_warmup, 0, 1, true}).jobs, 2);
  EXPECT_EQ(choose_jobs({4, 64, 60, halftone_warmup, 0, 1, true}).jobs, 4);
  EXPECT_NE(choose_jobs({4, 64, 60, halftone_warmup, 0, 1, true}).why.find("4 GPUs x 1 (a chain of unbounded GPU time)"),
            std::string::npos);
  EXPECT_EQ(choose_jobs({1, 16, 40, warmup_seconds_at(Warmup{1, 0.5}, 60), 0, 1, true}).jobs, 2);
  // A long warm-up on GPUs of its own: lowpoly's 2.17 s over 4 GPUs (NVENC, say), a 40 s clip: one worker a GPU.
  EXPECT_EQ(choose_jobs({4, 64, 40, lowpoly_warmup}).jobs, 4);
  EXPECT_NE(choose_jobs({4, 64, 40, lowpoly_warmup}).why.find("up to one a GPU: 10 s a worker"), std::string::npos);
  EXPECT_EQ(choose_jobs({4, 64, 25, lowpoly_warmup}).jobs, 2);
  EXPECT_EQ(choose_jobs({1, 32, 9, 0}).jobs, 1);      // under 10 s a worker: a single run
  EXPECT_EQ(choose_jobs({4, 64, 9, 0}).jobs, 1);
  EXPECT_EQ(choose_jobs({0, 2, 3600, 0}).jobs, 1);    // CI's two cores
  // A batch of 200 clips of 2 s (720p30, pencil, x264 ultrafast), one H200 with
  // 16 cores: 8 clips at a time 1297-1419 fps, 4 at a time 1190-1196; one
  // 400 s clip of the same frames 1500-1657 fps with 2, 4 or 8 workers.
  EXPECT_EQ(choose_jobs({1, 16, -1, 0, 200}).jobs, 8);
  EXPECT_EQ(choose_jobs({1, 16, -1, 0, 3}).jobs, 3);  // no more clips at a time than clips: each gets more cores
  EXPECT_EQ(choose_jobs({0, 2, -1, 0, 200}).jobs, 1);  // CI's two cores: the CPU backend's stages take them
  // Warm-up frames count at the input's rate, or at 30 fps where it is unknown.
  EXPECT_DOUBLE_EQ(warmup_seconds_at(Warmup{28, 0}, 0), 28.0 / 30);
  EXPECT_DOUBLE_EQ(warmup_seconds_at(Warmup{1, 0.5}, 60), (1 + 30 + 1) / 60.0);
}

// A batch's long clip is cut for the batch's --jobs N, or under --jobs auto
// as its own `run CLIP --jobs auto` would cut it: the workers its length is
// worth (10 s each, or 20 times the warm-up), the host's GPUs and cores, at
// most the clips at a time.
TEST(AutoJobs, ABatchCutsALongClipAsItsOwnRunWould) {
  std::mt19937_64 rng(test::fresh_seed());
  LongClipRules rules;
  rules.warmup = Warmup{28, 0};  // pencil's
  const double rate = 60;
  const double warmup = 28 / rate;
  for (int round = 0; round < 500; ++round) {
    InputLength length;
    length.seconds = double(20 + rng() % 2000);
    length.frame_rate = rate;
    const int jobs = 2 + int(rng() % 40);
    rules.auto_host.reset();
    EXPECT_EQ(jobs_to_cut(rules, length, jobs), jobs) << "--jobs N cuts every long clip for N";
    const AutoJobsHost host{1 + int(rng() % 8), 1 + int(rng() % 128)};
    rules.auto_host = host;
    int by_length = std::max(1, int(length.seconds / std::max(10.0, warmup / 0.05)));
    if (host.gpus > 1) by_length = std::max(by_length, std::min(host.gpus, int(length.seconds / 10)));
    int own_run = std::max(1, std::min({4 * host.gpus, std::max(1, host.cores / 8), by_length}));
    if (host.gpus > 1 && own_run > host.gpus) own_run -= own_run % host.gpus;
    const int expected = std::min(jobs, own_run);
    EXPECT_EQ(jobs_to_cut(rules, length, jobs), expected)
        << length.seconds << " s, " << host.gpus << " GPUs, " << host.cores << " cores, --jobs " << jobs;
  }
  // 4 GPUs and 64 cores give a batch 32 clips at a time; a 30 s clip among
  // them is cut for 3 workers, not 32.
  rules.auto_host = AutoJobsHost{4, 64};
  InputLength length;
  length.frame_rate = rate;
  length.seconds = 30;
  EXPECT_EQ(jobs_to_cut(rules, length, 32), 3);
  length.seconds = 400;
  EXPECT_EQ(jobs_to_cut(rules, length, 32), 8);
}

// A batch weighs a long clip's warm-up as the clip's own run would
// (LongClipRules::warmup_weight), for its cut and for whether to cut at all.
TEST(AutoJobs, ABatchWeighsALongClipsWarmUpAsItsOwnRunWould) {
  std::mt19937_64 rng(test::fresh_seed());
  LongClipRules rules;
  rules.warmup = chain_warmup(parse_config("pipeline:\n  - lowpoly: {temporal: true}\n", "l.yaml"));
  rules.auto_host = AutoJobsHost{1, 16};
  InputLength length;
  length.seconds = 40;
  length.frame_rate = 60;
  EXPECT_EQ(jobs_to_cut(rules, length, 8), 1) << "a whole frame a warm-up frame: 43 s a worker";
  EXPECT_FALSE(worth_cutting(rules, length));
  rules.warmup_weight = [](const InputLength& l) { return l.seconds == 40 ? 0.44 : 1.0; };
  EXPECT_EQ(jobs_to_cut(rules, length, 8), 2);
  EXPECT_TRUE(worth_cutting(rules, length));
  for (int round = 0; round < 500; ++round) {
    const double weight = double(rng() % 1001) / 1000;
    rules.warmup_weight = [weight](const InputLength&) { return weight; };
    rules.auto_host = AutoJobsHost{1 + int(rng() % 8), 1 + int(rng() % 128)};
    length.seconds = double(1 + rng() % 600);
    AutoJobsHost own = *rules.auto_host;
    own.input_seconds = length.seconds;
    own.warmup_seconds = warmup_seconds_at(rules.warmup, length.frame_rate);
    own.warmup_weight = weight;
    const int jobs = 1 + int(rng() % 64);
    EXPECT_EQ(jobs_to_cut(rules, length, jobs), std::min(jobs, choose_jobs(own).jobs)) << choose_jobs(own).why;
    own.gpus = 1, own.cores = 1 << 20;  // the length alone
    EXPECT_EQ(worth_cutting(rules, length), choose_jobs(own).jobs >= 2) << choose_jobs(own).why;
  }
}

}  // namespace
}  // namespace sp
