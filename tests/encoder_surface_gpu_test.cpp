// NVENC reads the CUDA engine's output where the GPU made it: the engine
// converts into surfaces from the encoder's CUDA frames pool instead of
// downloading. The lent GPUs have no NVENC, so this checks everything up to
// the encoder: the surfaces, read back by FFmpeg, hold exactly what the
// download path delivers, and nothing crosses PCIe on the way.
#include <gtest/gtest.h>

extern "C" {
#include <libavutil/hwcontext.h>
}

#include <random>

#include "codecs/ffmpeg_util.h"
#include "codecs/nvenc.h"
#include "pipeline/device.h"
#include "pipeline/frame_engine.h"
#include "pipeline/params.h"
#include "pipeline/stage.h"
#include "tests/convert_test_util.h"
#include "tests/support/test_support.h"

namespace sp::test {
namespace {

std::vector<StageSpec> scale_to(Size size) {
  const StageDescriptor* scale = StageRegistry::instance().find("scale");
  StageSpec spec{"scale", default_params(scale->params)};
  spec.params.set("width", int64_t(size.width));
  spec.params.set("height", int64_t(size.height));
  spec.params.set("filter", std::string("bilinear"));
  return {spec};
}

std::vector<std::vector<uint8_t>> planes_of(const PlanarView& v) {
  const PlaneLayout layout = plane_layout(v.format, v.width, v.height);
  std::vector<std::vector<uint8_t>> planes(layout.count);
  for (int i = 0; i < layout.count; ++i)
    for (int y = 0; y < layout.rows[i]; ++y)
      planes[i].insert(planes[i].end(), v.plane[i] + y * v.pitch[i], v.plane[i] + y * v.pitch[i] + layout.pitch[i]);
  return planes;
}

TEST(EncoderSurfaceCuda, EngineWritesIntoEncoderFramesExactlyWhatItWouldDownload) {
  SP_REQUIRE_CUDA();
  start_cuda_context();
  AVBufferRef* device = nullptr;
  ASSERT_GE(create_shared_cuda_device(&device), 0);
  const uint64_t seed = fresh_seed();
  std::mt19937_64 rng(seed);
  const Size in{322, 182}, out{466, 262};  // pitches that are not the surfaces' alignment
  EngineFormats formats;
  formats.input_size = in;
  formats.input_format = PixelFormat::yuv420p;
  formats.input_color = {ColorMatrix::bt709, ColorRange::limited};
  formats.output_format = PixelFormat::yuv420p;
  formats.output_color = {ColorMatrix::bt601, ColorRange::limited};

  int error = 0;
  AVBufferRef* surfaces = make_cuda_frames_pool(device, AV_PIX_FMT_YUV420P, out.width, out.height, &error);
  ASSERT_NE(surfaces, nullptr) << av_error_text(error);

  BufferPool pool;
  auto downloading = make_cuda_engine(scale_to(out), pool, 3);
  auto direct = make_cuda_engine(scale_to(out), pool, 3);
  ASSERT_EQ(downloading->configure(formats), out);
  ASSERT_EQ(direct->configure(formats), out);
  int surfaces_taken = 0;
  direct->set_device_output([&] {
    FramePtr f = make_frame();
    if (av_hwframe_get_buffer(surfaces, f.get(), 0) < 0) throw std::runtime_error("no surface");
    ++surfaces_taken;
    DeviceOutput o;
    o.picture.format = PixelFormat::yuv420p;
    o.picture.width = out.width;
    o.picture.height = out.height;
    o.picture.on_device = true;
    for (int i = 0; i < 3; ++i) {
      o.picture.plane[i] = f->data[i];
      o.picture.pitch[i] = size_t(f->linesize[i]);
    }
    o.owner = std::shared_ptr<AVFrame>(f.release(), [](AVFrame* p) { av_frame_free(&p); });
    return o;
  });

  constexpr int kFrames = 7;  // more than the frames in flight: slots and surfaces get reused
  std::vector<Picture> inputs;
  for (int i = 0; i < kFrames; ++i)
    inputs.push_back(random_nominal_picture(PixelFormat::yuv420p, in.width, in.height, ColorRange::limited, rng));
  auto run = [&](FrameEngine& engine, auto&& collect) {
    for (int i = 0; i < kFrames; ++i) {
      while (!engine.can_submit()) collect(engine.take_oldest());
      FrameInfo info;
      info.index = i;
      engine.submit(inputs[i].view, info, i);
    }
    while (engine.in_flight() > 0) collect(engine.take_oldest());
  };
  std::vector<std::vector<std::vector<uint8_t>>> expected, got;
  run(*downloading, [&](EngineFrame f) { expected.push_back(planes_of(f.picture)); });
  run(*direct, [&](EngineFrame f) {
    ASSERT_TRUE(f.picture.on_device);
    auto* frame = static_cast<AVFrame*>(f.device_owner.get());
    FramePtr host = make_frame();
    ASSERT_GE(av_hwframe_transfer_data(host.get(), frame, 0), 0);
    PlanarView v;
    v.format = PixelFormat::yuv420p;
    v.width = out.width;
    v.height = out.height;
    for (int i = 0; i < 3; ++i) {
      v.plane[i] = host->data[i];
      v.pitch[i] = size_t(host->linesize[i]);
    }
    got.push_back(planes_of(v));
  });
  ASSERT_EQ(got.size(), size_t(kFrames));
  for (int i = 0; i < kFrames; ++i)
    for (int p = 0; p < 3; ++p) EXPECT_EQ(got[i][p], expected[i][p]) << "frame " << i << " plane " << p << " seed " << seed;
  EXPECT_EQ(surfaces_taken, kFrames);
  EXPECT_EQ(direct->traffic().device_to_host_bytes, 0u);
  EXPECT_GT(downloading->traffic().device_to_host_bytes, 0u);
  direct.reset();
  downloading.reset();
  av_buffer_unref(&surfaces);
  av_buffer_unref(&device);
}

}  // namespace
}  // namespace sp::test
