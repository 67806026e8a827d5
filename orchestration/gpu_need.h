#pragma once
// `--jobs auto` over several GPUs: how many of them a chain keeps busy. A
// GPU beyond those adds its driver start (0.1-0.3 s each, measured on H200
// hosts) and nothing else: pencil into libx264 on four H200s ran at 0.57-0.66
// of the host's encoder ceiling against one GPU's 0.75-0.81 (docs/perf.md,
// session 33). Decided before CUDA starts, so that the driver starts only the
// GPUs used.
#include <optional>
#include <string>

#include "pipeline/config.h"
#include "pipeline/image.h"
#include "pipeline/stage.h"
#include "pipeline/stage_chain.h"

namespace sp {

struct GpuNeedQuestion {
  int gpus_listed = 0;  // what --devices names
  int cores = 1;
  Size input;
  std::optional<GpuCost> chain;  // a frame at `input`, and what it encodes; nullopt: unknown
  // The software encoder the run is sure to use (libx264, libx265); empty
  // where it may be NVENC (one a GPU: more GPUs, more encoders) or is another.
  std::string software_encoder;
};

struct GpuNeed {
  int gpus = 0;     // of gpus_listed
  std::string why;  // "1 of 4 GPUs: ..."; empty where all are used for want of an estimate
};

// The GPUs whose kernels keep up with the encoders at their best: at most
// kX264MegapixelsPerCoreSecond a core. All of the listed ones where the
// chain's GPU time or the encoder is not known.
GpuNeed gpus_needed(const GpuNeedQuestion& question);

// What a warm-up frame costs the run's busiest resource, as a share of what
// a frame it encodes costs it (1: as much). A warm-up frame is decoded on
// NVDEC and run through the chain, never encoded: where the encoders on the
// cores are the limit, it takes only GPU time they leave idle. The chain's
// GPU time a frame over `gpus_listed` GPUs (here: those the run uses), over
// the larger of it and the encoders' time a frame at their best; 1 where
// either is unknown. One H200 with 16 cores (docs/perf.md, session 37):
// lowpoly's temporal mesh (2.17 s of warm-up a segment) into x264 ultrafast
// ran a 40 s 1080p60 clip at 600-623 fps alone, at 881-891 with two workers.
double warmup_weight(const GpuNeedQuestion& question);

// Whether the stages' GPU-time bounds (measured on H100s and H200s) hold
// on a GPU of this model ("NVIDIA H200", as the driver names it): those and
// their kin of the same or more bandwidth. An L4's 300 GB/s against an
// H200's 4.8 TB/s would take pencil ten times as long.
bool gpu_costs_hold_on(const std::string& model);

// The chain's GPU time a frame at `input` (Stage::gpu_cost, added up, each
// stage at the size the one before gives it) and its output size, where
// every stage bounds its own; nullopt otherwise.
std::optional<GpuCost> chain_gpu_cost(const Config& config, Size input);
std::optional<GpuCost> chain_gpu_cost(const std::vector<StageSpec>& stages, Size input);

}  // namespace sp
