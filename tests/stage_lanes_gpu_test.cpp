// Frames in flight run their non-temporal stages at the same time, each lane
// with its own instances and scratch; temporal stages stay in frame order.
// The oracle is the engine with one frame in flight: the output must not
// change by a bit.
#include <gtest/gtest.h>

#include <random>
#include <stdexcept>

#include "pipeline/device.h"
#include "pipeline/frame_engine.h"
#include "pipeline/params.h"
#include "pipeline/stage.h"
#include "tests/support/test_support.h"

namespace sp::test {
namespace {

StageSpec stage(const std::string& name, std::vector<std::pair<std::string, ParamValue>> values) {
  const StageDescriptor* d = StageRegistry::instance().find(name);
  // A build with STYLEPIPE_EXCLUDE_STAGES may lack it: the test fails, naming it, instead of crashing.
  if (!d) throw std::runtime_error("stage '" + name + "' is not linked into this build");
  StageSpec spec{name, default_params(d->params)};
  for (auto& [key, value] : values) spec.params.set(key, value);
  return spec;
}

struct Picture {
  std::vector<uint8_t> bytes;
  PlanarView view;
};

// Noise over a moving gradient: every frame differs, none is flat.
Picture random_frame(Size size, std::mt19937_64& rng, int frame) {
  const PlaneLayout layout = plane_layout(PixelFormat::yuv420p, size.width, size.height);
  Picture p;
  p.bytes.resize(layout.total_bytes());
  size_t offset = 0;
  p.view.format = PixelFormat::yuv420p;
  p.view.width = size.width;
  p.view.height = size.height;
  for (int i = 0; i < layout.count; ++i) {
    p.view.plane[i] = p.bytes.data() + offset;
    p.view.pitch[i] = size_t(layout.pitch[i]);
    for (int y = 0; y < layout.rows[i]; ++y)
      for (int x = 0; x < layout.pitch[i]; ++x)
        p.bytes[offset + size_t(y) * layout.pitch[i] + x] = uint8_t((x * 3 + y * 2 + frame * 7) / 3 + rng() % 48);
    offset += layout.bytes(i);
  }
  return p;
}

std::vector<std::vector<uint8_t>> run(const std::vector<StageSpec>& chain, const std::vector<Picture>& frames,
                                      int frames_in_flight, int* lanes, size_t* extra_bytes) {
  BufferPool pool;
  auto engine = make_cuda_engine(chain, pool, frames_in_flight);
  EngineFormats formats;
  formats.input_size = {frames[0].view.width, frames[0].view.height};
  formats.input_format = formats.output_format = PixelFormat::yuv420p;
  formats.input_color = formats.output_color = {ColorMatrix::bt709, ColorRange::limited};
  const Size out = engine->configure(formats);
  *lanes = engine->chain().lanes();
  *extra_bytes = engine->chain().extra_lane_bytes();
  const size_t out_bytes = plane_layout(PixelFormat::yuv420p, out.width, out.height).total_bytes();
  std::vector<std::vector<uint8_t>> outputs;
  auto take = [&] {
    EngineFrame f = engine->take_oldest();
    const uint8_t* data = static_cast<const uint8_t*>(f.storage.data());
    outputs.emplace_back(data, data + out_bytes);
  };
  for (size_t i = 0; i < frames.size(); ++i) {
    while (!engine->can_submit()) take();
    FrameInfo info;
    info.index = int64_t(i);
    info.time_seconds = double(i) / 30;
    engine->submit(frames[i].view, info, int64_t(i), false, nullptr);
  }
  while (engine->in_flight() > 0) take();
  return outputs;
}

void expect_same_output_with_lanes(const std::vector<StageSpec>& chain, const std::string& what, bool all_temporal) {
  const uint64_t seed = fresh_seed();
  std::mt19937_64 rng(seed);
  const Size size{160 + int(rng() % 64) * 2, 120 + int(rng() % 48) * 2};
  std::vector<Picture> frames;
  for (int f = 0; f < 14; ++f) frames.push_back(random_frame(size, rng, f));
  int lanes_one = 0, lanes_four = 0;
  size_t extra_one = 0, extra_four = 0;
  const auto one = run(chain, frames, 1, &lanes_one, &extra_one);
  const auto four = run(chain, frames, 4, &lanes_four, &extra_four);
  EXPECT_EQ(lanes_one, 1);
  EXPECT_EQ(lanes_four, 4);
  EXPECT_EQ(extra_one, 0u);
  if (all_temporal) EXPECT_EQ(extra_four, 0u) << what << ": a temporal stage has one instance";
  else EXPECT_GT(extra_four, 0u) << what << ": lanes past the first own scratch or buffers";
  ASSERT_EQ(one.size(), frames.size());
  ASSERT_EQ(four.size(), frames.size());
  for (size_t i = 0; i < one.size(); ++i)
    ASSERT_EQ(one[i], four[i]) << what << ": frame " << i << " differs with 4 frames in flight (" << size.width
                               << "x" << size.height << ", seed " << seed << ")";
}

TEST(StageLanesCuda, NonTemporalChainGivesTheSameFramesWithFourInFlight) {
  SP_REQUIRE_CUDA();
  start_cuda_context();
  expect_same_output_with_lanes({stage("scale", {{"factor", 1.5}, {"filter", std::string("bilinear")}}),
                                 stage("xbr", {{"scale", int64_t(2)}}), stage("pencil", {})},
                                "scale, xbr, pencil", false);
}

TEST(StageLanesCuda, MixedChainKeepsTemporalStagesInFrameOrder) {
  SP_REQUIRE_CUDA();
  start_cuda_context();
  // Smoothing carries each frame's histogram into the next: out of order, the tones would differ.
  expect_same_output_with_lanes({stage("xbr", {{"scale", int64_t(2)}}),
                                 stage("pencil", {{"temporal_smoothing", 0.8}}),
                                 stage("lowpoly", {{"temporal", true}})},
                                "xbr, temporal pencil, temporal lowpoly", false);
  expect_same_output_with_lanes({stage("pencil", {{"temporal_smoothing", 0.6}})}, "temporal pencil", true);
}

}  // namespace
}  // namespace sp::test
