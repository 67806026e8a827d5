#pragma once
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "pipeline/image.h"
#include "pipeline/stage_chain.h"

namespace sp {

struct BenchOptions {
  std::vector<StageSpec> stages;
  std::string input;  // decode frames from here, or generate at `size` when empty
  Size size{1920, 1080};
  PixelFormat format = PixelFormat::yuv420p;
  int frames = 300;
  int warmup = 30;
  int frames_in_flight = 3;
  std::string backend = "auto";
};

// Times the chain: per step (conversions and each stage) median and p95 from
// CUDA events after a warm-up, device-resident throughput, and throughput
// with host<->device transfers through the frame engine. Each step's time is
// set against its floor: the bytes it must move over the memory bandwidth.
nlohmann::json run_bench(const BenchOptions& options);
std::string bench_table(const nlohmann::json& report);

}  // namespace sp
