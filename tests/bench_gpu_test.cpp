// `stylepipe bench` on the GPU says beside the measured time what --jobs
// auto takes the chain's GPU time to be, so that a GPU slower than the ones
// the bounds come from shows it.
#include <gtest/gtest.h>

#include <random>

#include <nlohmann/json.hpp>

#include "orchestration/gpu_need.h"
#include "pipeline/config.h"
#include "pipeline/device.h"
#include "tests/e2e_util.h"
#include "tests/support/test_support.h"

namespace sp::test {
namespace {

CommandResult bench(const std::string& args) { return run_command(shell_quote(stylepipe_binary()) + " bench " + args); }

TEST(BenchCuda, SaysTheJobsAutoBoundBesideTheMeasuredTime) {
  if (!cuda_device_available()) GTEST_SKIP() << "no CUDA device: bench --backend cuda is not exercised here";
  std::mt19937_64 rng(fresh_seed());
  const Size size{160 + 16 * int(rng() % 40), 90 + 10 * int(rng() % 40)};
  const std::string at = std::to_string(size.width) + "x" + std::to_string(size.height);
  TempDir dir;
  const std::string pencil = source_dir() + "/configs/bench/pencil.yaml", report = dir.file("bench.json");
  CommandResult r = bench("--config " + pencil + " --size " + at + " --frames 20 --warmup 5 --backend cuda --json " + report);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const nlohmann::json device = read_json(report)["device_resident"];
  const std::optional<GpuCost> bound = chain_gpu_cost(load_config(pencil), size);
  ASSERT_TRUE(bound);
  EXPECT_DOUBLE_EQ(device["jobs_auto_bound_ms"].get<double>(), bound->milliseconds) << at;
  EXPECT_NE(r.output.find("--jobs auto takes this chain to need"), std::string::npos) << r.output;
  EXPECT_GT(device["device_ms_per_frame"].get<double>(), 0);

  // A chain without a bound says nothing of it.
  r = bench("--config " + source_dir() + "/configs/bench/pencil_lu2012.yaml --size " + at +
                " --frames 5 --warmup 1 --backend cuda --json " + report);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_FALSE(read_json(report)["device_resident"].contains("jobs_auto_bound_ms"));
  EXPECT_EQ(r.output.find("--jobs auto takes"), std::string::npos) << r.output;
}

}  // namespace
}  // namespace sp::test
