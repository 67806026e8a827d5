// Each stage's GPU-time bound (Stage::gpu_cost) against its measured time:
// `stylepipe bench --config C --size S --frames 200 --warmup 30 --backend
// cuda`, device milliseconds a frame (device_resident.device_ms_per_frame),
// on an H200 (session 36, `.devkit/call1.sh`). A bound must not fall short
// of what was measured (it would take away a GPU a chain needs), nor lie so
// far above that it keeps GPUs the chain leaves idle.
#include <gtest/gtest.h>

#include "orchestration/gpu_need.h"
#include "tests/support/test_support.h"

namespace sp::test {
namespace {

std::optional<GpuCost> chain_cost(const std::string& pipeline, Size size) {
  return chain_gpu_cost(parse_config("pipeline:\n" + pipeline, "chain.yaml"), size);
}

struct Measured {
  const char* stage;
  Size size;
  double device_ms;
};

const Measured kH200[] = {
    {"pencil: {color: true}", {256, 240}, 0.0463},
    {"pencil: {color: true}", {640, 360}, 0.0458},
    {"pencil: {color: true}", {1280, 720}, 0.0764},
    {"pencil: {color: true}", {1920, 1080}, 0.1804},
    {"pencil: {color: true}", {3840, 2160}, 1.2468},
    {"lowpoly: {}", {256, 240}, 0.1310},
    {"lowpoly: {}", {640, 360}, 0.1486},
    {"lowpoly: {}", {1280, 720}, 0.1487},
    {"lowpoly: {}", {1920, 1080}, 0.1914},
    {"lowpoly: {}", {3840, 2160}, 0.5559},
    {"lowpoly: {points_per_mp: 20000}", {640, 360}, 0.1299},
    {"lowpoly: {points_per_mp: 20000}", {1920, 1080}, 0.3506},
    {"lowpoly: {points_per_mp: 20000}", {3840, 2160}, 1.3055},
    {"lowpoly: {points_per_mp: 1000}", {1920, 1080}, 0.1587},
    {"lowpoly: {points_per_mp: 1000}", {3840, 2160}, 0.3768},
    {"lowpoly: {mesh: squares}", {256, 240}, 0.2246},
    {"lowpoly: {mesh: squares}", {1920, 1080}, 0.3510},
    {"lowpoly: {mesh: squares}", {3840, 2160}, 1.1832},
    {"lowpoly: {line_width: 2}", {1920, 1080}, 0.2106},
    {"lowpoly: {line_width: 2}", {3840, 2160}, 0.6363},
    {"lowpoly: {temporal: true, color_smoothing: 0.5}", {256, 240}, 0.2272},
    {"lowpoly: {temporal: true, color_smoothing: 0.5}", {1920, 1080}, 0.3613},
    {"lowpoly: {temporal: true, color_smoothing: 0.5}", {3840, 2160}, 0.7682},
    {"lowpoly: {fill: centroid}", {3840, 2160}, 0.4611},
    {"xbr: {scale: 2}", {256, 240}, 0.0058},
    {"xbr: {scale: 2}", {1280, 720}, 0.0583},
    {"xbr: {scale: 2}", {1920, 1080}, 0.1316},
    {"xbr: {scale: 2}", {3840, 2160}, 0.5258},
    {"xbr: {scale: 3}", {640, 360}, 0.0206},
    {"xbr: {scale: 3}", {1920, 1080}, 0.1831},
    {"xbr: {scale: 4}", {256, 240}, 0.0078},
    {"xbr: {scale: 4}", {1280, 720}, 0.1017},
    {"xbr: {scale: 4}", {1920, 1080}, 0.2263},
    {"xbr: {scale: 4, mode: threshold, threshold: 30}", {1920, 1080}, 0.2128},
    {"scale: {factor: 0.5}", {3840, 2160}, 0.0438},
    {"scale: {factor: 2}", {1280, 720}, 0.0300},
    {"scale: {factor: 2}", {1920, 1080}, 0.0688},
    {"scale: {factor: 2, filter: nearest}", {1920, 1080}, 0.0514},
    {"scale: {width: 1280, filter: area}", {256, 240}, 0.0148},
    {"scale: {width: 1280, filter: area}", {3840, 2160}, 0.0468},
};

TEST(GpuCost, EachStagesBoundCoversItsMeasuredTimeAndStaysNearIt) {
  for (const Measured& m : kH200) {
    const std::optional<GpuCost> cost = chain_cost(std::string("  - ") + m.stage + "\n", m.size);
    ASSERT_TRUE(cost) << m.stage;
    const std::string at = std::string(m.stage) + " at " + std::to_string(m.size.width) + "x" + std::to_string(m.size.height);
    EXPECT_GE(cost->milliseconds, 0.95 * m.device_ms) << at;
    // Tiny figures get 0.02 ms of slack: a launch's worth, which no encoder notices.
    EXPECT_LE(cost->milliseconds, 2.0 * m.device_ms + 0.02) << at;
  }
}

TEST(GpuCost, EachStageIsCostedAtTheSizeTheOneBeforeGivesIt) {
  const Size small{480, 270};
  const GpuCost xbr = *chain_cost("  - xbr: {scale: 4}\n", small);
  EXPECT_EQ(xbr.output, (Size{1920, 1080}));
  const GpuCost pencil_hd = *chain_cost("  - pencil: {}\n", {1920, 1080});
  const GpuCost chain = *chain_cost("  - xbr: {scale: 4}\n  - pencil: {}\n", small);
  EXPECT_DOUBLE_EQ(chain.milliseconds, xbr.milliseconds + pencil_hd.milliseconds);
  EXPECT_EQ(chain.output, (Size{1920, 1080}));
  const GpuCost halved = *chain_cost("  - scale: {width: 960, height: 540}\n  - lowpoly: {}\n", {3840, 2160});
  EXPECT_EQ(halved.output, (Size{960, 540}));
  EXPECT_LT(halved.milliseconds, chain_cost("  - lowpoly: {}\n", {3840, 2160})->milliseconds);
}

TEST(GpuCost, TheBoundsHoldOnlyOnTheGpusMeasuredAndFaster) {
  for (const char* model : {"NVIDIA H200", "NVIDIA H100 80GB HBM3", "NVIDIA H100 NVL", "NVIDIA GH200 480GB", "NVIDIA B200"})
    EXPECT_TRUE(gpu_costs_hold_on(model)) << model;
  for (const char* model : {"NVIDIA L4", "Tesla T4", "NVIDIA A100-SXM4-80GB", "NVIDIA A10", "NVIDIA H100 PCIe", "NVIDIA GeForce RTX 4090", ""})
    EXPECT_FALSE(gpu_costs_hold_on(model)) << model;
}

TEST(GpuCost, ParametersThatBoundNothingLeaveTheStageUnknown) {
  EXPECT_FALSE(chain_cost("  - lowpoly: {voronoi_check: true}\n", {1920, 1080})) << "a second mesh on the host";
  EXPECT_FALSE(chain_cost("  - xbr: {scale: 2}\n  - halftone: {}\n", {640, 360})) << "one unknown stage";
}

}  // namespace
}  // namespace sp::test
