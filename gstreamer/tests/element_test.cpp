// The `stylepipe` element through GstHarness and small pipelines, against its
// independent oracle: `stylepipe run` (the CLI) on the same raw frames. The
// plugin is found through GST_PLUGIN_PATH (CTest sets it to the build's), the
// CLI through STYLEPIPE_BINARY. Frames are random, from a fresh seed per run
// (SP_TEST_SEED replays one). The leaks tracer is on for the whole binary
// (GST_TRACERS=leaks unless set otherwise), so state-change loops can count
// the objects left alive.
#include <gst/check/gstharness.h>
#include <gst/gst.h>
#include <gst/video/video.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#if defined(__SANITIZE_ADDRESS__)
#define SP_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SP_ASAN 1
#endif
#endif

#ifdef SP_ASAN
// LeakSanitizer: GLib's own allocations (threads' and plugins' caches, the
// registry scanned in this process) reach it without a stack past g_malloc;
// the GStreamer objects are the leaks tracer's to count (StateChangeLoops...),
// and the plugin's C++ allocations keep their stacks.
extern "C" const char* __lsan_default_suppressions() { return "leak:libglib-2.0.so\n"; }
#endif

namespace {

namespace fs = std::filesystem;

uint64_t seed() {
  static const uint64_t value = [] {
    if (const char* s = std::getenv("SP_TEST_SEED")) return uint64_t(std::strtoull(s, nullptr, 10));
    return uint64_t(std::chrono::steady_clock::now().time_since_epoch().count());
  }();
  return value;
}

// RGBA8, rows `pitch` bytes apart.
struct Picture {
  int width = 0, height = 0;
  size_t pitch = 0;
  std::vector<uint8_t> bytes;
  Picture() = default;
  Picture(int w, int h, size_t p = 0) : width(w), height(h), pitch(p ? p : size_t(w) * 4), bytes(pitch * size_t(h)) {}
  uint8_t* row(int y) { return bytes.data() + size_t(y) * pitch; }
  const uint8_t* row(int y) const { return bytes.data() + size_t(y) * pitch; }
  // The pixels alone, rows packed.
  std::vector<uint8_t> packed() const {
    std::vector<uint8_t> out;
    for (int y = 0; y < height; ++y) out.insert(out.end(), row(y), row(y) + size_t(width) * 4);
    return out;
  }
};

// Smooth gradients, a few discs and noise: photo-like, never constant.
Picture photo(int width, int height, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::normal_distribution<double> noise(0.0, 6.0);
  double a[3], b[3], phase[3];
  for (int c = 0; c < 3; ++c) a[c] = 0.01 + 0.07 * u(rng), b[c] = 0.01 + 0.07 * u(rng), phase[c] = 6.28 * u(rng);
  struct Disc {
    double x, y, r;
    uint8_t colour[3];
  };
  std::vector<Disc> discs(4);
  for (Disc& d : discs) {
    d.x = u(rng) * width, d.y = u(rng) * height, d.r = 3 + u(rng) * std::max(1.0, height / 3.0);
    for (uint8_t& c : d.colour) c = uint8_t(u(rng) * 255);
  }
  Picture p(width, height);
  for (int y = 0; y < height; ++y)
    for (int x = 0; x < width; ++x) {
      uint8_t* px = p.row(y) + size_t(x) * 4;
      double v[3];
      for (int c = 0; c < 3; ++c) v[c] = 128 + 100 * std::sin(a[c] * x + b[c] * y + phase[c]);
      for (const Disc& d : discs)
        if ((x - d.x) * (x - d.x) + (y - d.y) * (y - d.y) < d.r * d.r)
          for (int c = 0; c < 3; ++c) v[c] = d.colour[c];
      for (int c = 0; c < 3; ++c) px[c] = uint8_t(std::clamp(v[c] + noise(rng), 0.0, 255.0));
      px[3] = 255;
    }
  return p;
}

struct TempDir {
  fs::path path;
  TempDir() {
    std::string pattern = (fs::temp_directory_path() / "sp-gst-XXXXXX").string();
    path = mkdtemp(pattern.data());
  }
  ~TempDir() {
    std::error_code ignored;
    fs::remove_all(path, ignored);
  }
  std::string file(const std::string& name) const { return (path / name).string(); }
};

std::string quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// `stylepipe run` of raw frames (`pix_fmt`, each frame's bytes one after the
// other) to raw RGBA frames on the CPU: the oracle.
std::vector<std::vector<uint8_t>> cli_output_of_raw(const std::string& config_text, const std::vector<uint8_t>& raw_frames,
                                                    size_t frame_count, const char* pix_fmt, int width, int height,
                                                    int out_width, int out_height) {
  const char* binary = std::getenv("STYLEPIPE_BINARY");
  if (!binary) ADD_FAILURE() << "STYLEPIPE_BINARY is not set";
  if (!binary) return {};
  TempDir dir;
  const std::string config = dir.file("c.yaml"), in = dir.file("in.raw"), out = dir.file("out.rgba");
  std::ofstream(config) << config_text;
  std::ofstream(in, std::ios::binary).write(reinterpret_cast<const char*>(raw_frames.data()), std::streamsize(raw_frames.size()));
  const std::string command = quote(binary) + " run " + quote(config) + " -f rawvideo --pix-fmt " + pix_fmt +
                              " --size " + std::to_string(width) + "x" + std::to_string(height) +
                              " --rate 30 -i " + quote(in) +
                              " --backend cpu --progress none --codec rawvideo -f rawvideo --pix-fmt rgba -o " +
                              quote(out) + " 2>&1";
  const int status = std::system(command.c_str());
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << command;
  std::ifstream raw(out, std::ios::binary);
  const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(raw)), std::istreambuf_iterator<char>());
  const size_t frame_bytes = size_t(out_width) * size_t(out_height) * 4;
  EXPECT_EQ(bytes.size(), frame_bytes * frame_count);
  std::vector<std::vector<uint8_t>> result;
  for (size_t at = 0; at + frame_bytes <= bytes.size(); at += frame_bytes)
    result.emplace_back(bytes.begin() + std::ptrdiff_t(at), bytes.begin() + std::ptrdiff_t(at + frame_bytes));
  return result;
}

std::vector<std::vector<uint8_t>> cli_output(const std::string& config_text, const std::vector<Picture>& frames,
                                             int out_width, int out_height) {
  std::vector<uint8_t> raw;
  for (const Picture& f : frames) {
    const std::vector<uint8_t> bytes = f.packed();
    raw.insert(raw.end(), bytes.begin(), bytes.end());
  }
  return cli_output_of_raw(config_text, raw, frames.size(), "rgba", frames[0].width, frames[0].height, out_width,
                           out_height);
}

std::string caps_text(const char* format, int width, int height) {
  return std::string("video/x-raw,format=") + format + ",width=" + std::to_string(width) +
         ",height=" + std::to_string(height) + ",framerate=30/1";
}

// A buffer of `p` (RGBA, or BGRx where `bgrx`), with a GstVideoMeta where its
// rows are padded, timestamped as frame `index` of a 30 fps stream.
GstBuffer* buffer_of(const Picture& p, int index, bool bgrx = false) {
  GstBuffer* buffer = gst_buffer_new_allocate(nullptr, p.bytes.size(), nullptr);
  GstMapInfo map;
  gst_buffer_map(buffer, &map, GST_MAP_WRITE);
  std::memcpy(map.data, p.bytes.data(), p.bytes.size());
  if (bgrx)
    for (int y = 0; y < p.height; ++y)
      for (int x = 0; x < p.width; ++x) {
        uint8_t* px = map.data + size_t(y) * p.pitch + size_t(x) * 4;
        std::swap(px[0], px[2]);
        px[3] = uint8_t(0x5A + x);  // x: any byte, never read as alpha
      }
  gst_buffer_unmap(buffer, &map);
  if (p.pitch != size_t(p.width) * 4) {
    gsize offsets[GST_VIDEO_MAX_PLANES] = {0};
    gint strides[GST_VIDEO_MAX_PLANES] = {gint(p.pitch)};
    gst_buffer_add_video_meta_full(buffer, GST_VIDEO_FRAME_FLAG_NONE,
                                   bgrx ? GST_VIDEO_FORMAT_BGRx : GST_VIDEO_FORMAT_RGBA, guint(p.width),
                                   guint(p.height), 1, offsets, strides);
  }
  GST_BUFFER_PTS(buffer) = gst_util_uint64_scale(guint64(index), GST_SECOND, 30);
  GST_BUFFER_DURATION(buffer) = gst_util_uint64_scale(1, GST_SECOND, 30);
  return buffer;
}

// The output's pixels, rows packed, read at the buffer's own stride.
std::vector<uint8_t> pixels_of(GstBuffer* buffer, GstCaps* caps) {
  GstVideoInfo info;
  EXPECT_TRUE(gst_video_info_from_caps(&info, caps));
  GstVideoFrame frame;
  EXPECT_TRUE(gst_video_frame_map(&frame, &info, buffer, GST_MAP_READ));
  std::vector<uint8_t> out;
  const int width = GST_VIDEO_FRAME_WIDTH(&frame), height = GST_VIDEO_FRAME_HEIGHT(&frame);
  const auto* data = static_cast<const uint8_t*>(GST_VIDEO_FRAME_PLANE_DATA(&frame, 0));
  const size_t stride = size_t(GST_VIDEO_FRAME_PLANE_STRIDE(&frame, 0));
  for (int y = 0; y < height; ++y) out.insert(out.end(), data + y * stride, data + y * stride + size_t(width) * 4);
  gst_video_frame_unmap(&frame);
  return out;
}

size_t differing_bytes(const std::vector<uint8_t>& a, const std::vector<uint8_t>& b) {
  if (a.size() != b.size()) return std::max(a.size(), b.size());
  size_t n = 0;
  for (size_t i = 0; i < a.size(); ++i) n += a[i] != b[i];
  return n;
}

// The element, configured before the harness plays it (NULL -> READY reads the config).
GstHarness* stylepipe_harness(const std::string& pipeline_yaml) {
  GstElement* element = gst_element_factory_make("stylepipe", nullptr);
  EXPECT_NE(element, nullptr) << "no stylepipe element: is GST_PLUGIN_PATH the build's gstreamer/ folder?";
  gst_util_set_object_arg(G_OBJECT(element), "backend", "cpu");
  g_object_set(element, "pipeline", pipeline_yaml.c_str(), nullptr);
  GstHarness* h = gst_harness_new_with_element(element, "sink", "src");
  gst_object_unref(element);
  return h;
}

// Pushes `frames` (at their pitch, as BGRx where asked) and pulls one output each.
std::vector<std::vector<uint8_t>> run_harness(GstHarness* h, const std::vector<Picture>& frames, bool bgrx = false,
                                              int first_index = 0) {
  std::vector<std::vector<uint8_t>> out;
  for (size_t i = 0; i < frames.size(); ++i) {
    EXPECT_EQ(gst_harness_push(h, buffer_of(frames[i], first_index + int(i), bgrx)), GST_FLOW_OK) << "frame " << i;
    GstBuffer* result = gst_harness_pull(h);
    if (!result) {
      ADD_FAILURE() << "no output for frame " << i;
      break;
    }
    GstCaps* caps = gst_pad_get_current_caps(h->sinkpad);
    out.push_back(pixels_of(result, caps));
    gst_caps_unref(caps);
    gst_buffer_unref(result);
  }
  return out;
}

std::vector<Picture> with_pitch(const std::vector<Picture>& frames, size_t extra) {
  std::vector<Picture> out;
  for (const Picture& f : frames) {
    Picture p(f.width, f.height, size_t(f.width) * 4 + extra);
    std::fill(p.bytes.begin(), p.bytes.end(), uint8_t(0xEE));  // the padding: never read as pixels
    for (int y = 0; y < f.height; ++y) std::copy_n(f.row(y), size_t(f.width) * 4, p.row(y));
    out.push_back(std::move(p));
  }
  return out;
}

struct ChainCase {
  const char* name;
  const char* config;
  int scale;  // output size / input size
};
void PrintTo(const ChainCase& c, std::ostream* os) { *os << c.name; }

class ElementAgainstCli : public ::testing::TestWithParam<ChainCase> {};

// Random frames of an odd size through GstHarness: the element gives the CLI's
// bytes, whether the input rows are packed or padded (GstVideoMeta stride),
// RGBA or BGRx.
TEST_P(ElementAgainstCli, GivesTheCliOutputBitForBit) {
  std::mt19937_64 rng(seed() + std::hash<std::string>{}(GetParam().name));
  const int width = 61 + 2 * int(rng() % 40), height = 41 + 2 * int(rng() % 25);  // odd on purpose
  std::vector<Picture> frames;
  for (int i = 0; i < 5; ++i) frames.push_back(photo(width, height, rng));
  const int out_width = width * GetParam().scale, out_height = height * GetParam().scale;
  const std::vector<std::vector<uint8_t>> expected = cli_output(GetParam().config, frames, out_width, out_height);
  ASSERT_EQ(expected.size(), frames.size());

  struct Variant {
    const char* what;
    size_t extra_pitch;
    bool bgrx;
  };
  for (const Variant v : {Variant{"RGBA, packed rows", 0, false}, Variant{"RGBA, rows padded by 36 bytes", 36, false},
                          Variant{"BGRx, rows padded by 4 bytes", 4, true}}) {
    SCOPED_TRACE(v.what);
    GstHarness* h = stylepipe_harness(GetParam().config);
    gst_harness_set_src_caps_str(h, caps_text(v.bgrx ? "BGRx" : "RGBA", width, height).c_str());
    const std::vector<std::vector<uint8_t>> got = run_harness(h, with_pitch(frames, v.extra_pitch), v.bgrx);
    ASSERT_EQ(got.size(), frames.size());
    for (size_t i = 0; i < frames.size(); ++i)
      EXPECT_EQ(differing_bytes(got[i], expected[i]), 0u) << "frame " << i << " (" << width << "x" << height << ")";
    GstCaps* caps = gst_pad_get_current_caps(h->sinkpad);
    GstVideoInfo info;
    ASSERT_TRUE(gst_video_info_from_caps(&info, caps));
    EXPECT_EQ(GST_VIDEO_INFO_WIDTH(&info), out_width);
    EXPECT_EQ(GST_VIDEO_INFO_HEIGHT(&info), out_height);
    EXPECT_EQ(GST_VIDEO_INFO_FORMAT(&info), GST_VIDEO_FORMAT_RGBA);
    gst_caps_unref(caps);
    gst_harness_teardown(h);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Chains, ElementAgainstCli,
    ::testing::Values(ChainCase{"pencil_temporal", "pipeline:\n  - pencil: {color: true, temporal_smoothing: 0.8}\n", 1},
                      ChainCase{"xbr", "pipeline:\n  - xbr: {scale: 2}\n", 2}),
    [](const auto& info) { return std::string(info.param.name); });

// A YUV 4:2:0 frame (NV12 or I420) in one buffer, every plane's rows padded
// by `padding` bytes of other values: photo-like luma, smooth chroma, noise.
struct YuvPicture {
  GstVideoFormat format;
  int width, height;
  size_t padding;
  std::vector<uint8_t> bytes;
  gsize offsets[GST_VIDEO_MAX_PLANES] = {};
  gint strides[GST_VIDEO_MAX_PLANES] = {};
  int planes = 0;

  // Bytes a row and rows of plane i, without padding.
  std::pair<size_t, int> shape(int i) const {
    const size_t chroma_width = size_t(width + 1) / 2;
    if (i == 0) return {size_t(width), height};
    return {format == GST_VIDEO_FORMAT_NV12 ? 2 * chroma_width : chroma_width, (height + 1) / 2};
  }
  YuvPicture(GstVideoFormat f, const Picture& rgb, size_t pad) : format(f), width(rgb.width), height(rgb.height), padding(pad) {
    planes = format == GST_VIDEO_FORMAT_NV12 ? 2 : 3;
    size_t total = 0;
    for (int i = 0; i < planes; ++i) {
      offsets[i] = total;
      strides[i] = gint(shape(i).first + padding);
      total += size_t(strides[i]) * size_t(shape(i).second);
    }
    bytes.assign(total, 0xEE);
    // Luma from the picture; chroma from its 2x2 blocks (any values would do:
    // the CLI reads the same bytes).
    for (int y = 0; y < height; ++y)
      for (int x = 0; x < width; ++x) {
        const uint8_t* px = rgb.row(y) + size_t(x) * 4;
        bytes[offsets[0] + size_t(y) * size_t(strides[0]) + size_t(x)] = uint8_t(16 + (px[0] * 66 + px[1] * 129 + px[2] * 25) / 256);
      }
    for (int j = 0; j < shape(1).second; ++j)
      for (int i = 0; i < (width + 1) / 2; ++i) {
        const uint8_t* px = rgb.row(std::min(2 * j, height - 1)) + size_t(std::min(2 * i, width - 1)) * 4;
        const uint8_t u = uint8_t(128 + (px[2] - px[1]) / 3), v = uint8_t(128 + (px[0] - px[1]) / 3);
        if (format == GST_VIDEO_FORMAT_NV12) {
          uint8_t* uv = bytes.data() + offsets[1] + size_t(j) * size_t(strides[1]) + 2 * size_t(i);
          uv[0] = u, uv[1] = v;
        } else {
          bytes[offsets[1] + size_t(j) * size_t(strides[1]) + size_t(i)] = u;
          bytes[offsets[2] + size_t(j) * size_t(strides[2]) + size_t(i)] = v;
        }
      }
  }
  // The planes without padding, as a raw file holds them.
  std::vector<uint8_t> tight() const {
    std::vector<uint8_t> out;
    for (int i = 0; i < planes; ++i)
      for (int y = 0; y < shape(i).second; ++y) {
        const auto row = bytes.begin() + std::ptrdiff_t(offsets[i] + size_t(y) * size_t(strides[i]));
        out.insert(out.end(), row, row + std::ptrdiff_t(shape(i).first));
      }
    return out;
  }
  GstBuffer* buffer(int index) const {
    GstBuffer* b = gst_buffer_new_memdup(bytes.data(), bytes.size());
    gst_buffer_add_video_meta_full(b, GST_VIDEO_FRAME_FLAG_NONE, format, guint(width), guint(height), guint(planes),
                                   const_cast<gsize*>(offsets), const_cast<gint*>(strides));
    GST_BUFFER_PTS(b) = gst_util_uint64_scale(guint64(index), GST_SECOND, 30);
    GST_BUFFER_DURATION(b) = gst_util_uint64_scale(1, GST_SECOND, 30);
    return b;
  }
};

// NV12 and I420 frames with padded planes (as decoders give them): the CLI's
// bytes for the same raw frames. The caps name the colour the CLI gives an
// untagged video of that height (BT.601 up to 576 rows, BT.709 above), so
// the element must follow the caps' colorimetry: with the other matrix named,
// the frames differ.
TEST(Element, YuvFramesGiveTheCliOutputWithTheCapsColour) {
  std::mt19937_64 rng(seed() + 17);
  const std::string config = "pipeline:\n  - pencil: {color: true, temporal_smoothing: 0.8}\n";
  struct Case {
    GstVideoFormat format;
    int width, height;
    const char *colorimetry, *other;
  };
  for (const Case c : {Case{GST_VIDEO_FORMAT_NV12, 61 + 2 * int(rng() % 30), 41 + 2 * int(rng() % 20), "bt601", "bt709"},
                       Case{GST_VIDEO_FORMAT_I420, 37, 579, "bt709", "bt601"}}) {
    const char* format = gst_video_format_to_string(c.format);
    SCOPED_TRACE(testing::Message() << format << " " << c.width << "x" << c.height << " " << c.colorimetry);
    std::vector<YuvPicture> frames;
    std::vector<uint8_t> raw;
    for (int i = 0; i < 4; ++i) {
      frames.emplace_back(c.format, photo(c.width, c.height, rng), 1 + rng() % 40);
      const std::vector<uint8_t> tight = frames.back().tight();
      raw.insert(raw.end(), tight.begin(), tight.end());
    }
    const auto expected = cli_output_of_raw(config, raw, frames.size(), c.format == GST_VIDEO_FORMAT_NV12 ? "nv12" : "yuv420p",
                                            c.width, c.height, c.width, c.height);
    ASSERT_EQ(expected.size(), frames.size());
    for (const char* colorimetry : {c.colorimetry, c.other}) {
      GstHarness* h = stylepipe_harness(config);
      gst_harness_set_src_caps_str(h, (caps_text(format, c.width, c.height) + ",colorimetry=" + colorimetry).c_str());
      size_t differing = 0;
      for (size_t i = 0; i < frames.size(); ++i) {
        ASSERT_EQ(gst_harness_push(h, frames[i].buffer(int(i))), GST_FLOW_OK);
        GstBuffer* result = gst_harness_pull(h);
        ASSERT_NE(result, nullptr);
        GstCaps* caps = gst_pad_get_current_caps(h->sinkpad);
        differing += differing_bytes(pixels_of(result, caps), expected[i]);
        gst_caps_unref(caps);
        gst_buffer_unref(result);
      }
      if (colorimetry == c.colorimetry)
        EXPECT_EQ(differing, 0u) << "the CLI's colour";
      else
        EXPECT_GT(differing, 0u) << colorimetry << " gave " << c.colorimetry << "'s frames";
      GstStructure* stats = nullptr;
      g_object_get(gst_harness_find_element(h, "stylepipe"), "stats", &stats, nullptr);
      guint64 yuv_frames = 0;
      EXPECT_TRUE(gst_structure_get_uint64(stats, "yuv-frames", &yuv_frames));
      EXPECT_EQ(yuv_frames, frames.size());
      gst_structure_free(stats);
      gst_harness_teardown(h);
    }
  }
}

const char* kTemporal = "pipeline:\n  - pencil: {color: true, temporal_smoothing: 0.8}\n";

void push_flush_and_segment(GstHarness* h, bool flush) {
  if (flush) {
    ASSERT_TRUE(gst_harness_push_event(h, gst_event_new_flush_start()));
    ASSERT_TRUE(gst_harness_push_event(h, gst_event_new_flush_stop(TRUE)));
  }
  GstSegment segment;
  gst_segment_init(&segment, GST_FORMAT_TIME);
  ASSERT_TRUE(gst_harness_push_event(h, gst_event_new_segment(&segment)));
}

// A temporal chain starts again after a flushing seek and after a new segment:
// the same frames give the same output as the first time. Without the reset the
// smoothing would carry the previous frames' tone over.
TEST(Element, TemporalStagesStartAgainOnFlushAndNewSegment) {
  std::mt19937_64 rng(seed() + 11);
  const int width = 73, height = 45;
  std::vector<Picture> frames;
  for (int i = 0; i < 3; ++i) frames.push_back(photo(width, height, rng));
  std::vector<Picture> other;
  for (int i = 0; i < 2; ++i) other.push_back(photo(width, height, rng));

  GstHarness* h = stylepipe_harness(kTemporal);
  gst_harness_set_src_caps_str(h, caps_text("RGBA", width, height).c_str());
  const auto first = run_harness(h, frames);
  for (const bool flush : {true, false}) {
    SCOPED_TRACE(flush ? "flush" : "new segment");
    run_harness(h, other);
    push_flush_and_segment(h, flush);
    const auto again = run_harness(h, frames);
    ASSERT_EQ(again.size(), first.size());
    for (size_t i = 0; i < first.size(); ++i) EXPECT_EQ(differing_bytes(again[i], first[i]), 0u) << "frame " << i;
  }
  // Frames carried on (no reset) differ from a fresh start: the test can see a reset.
  const auto carried = run_harness(h, frames);
  EXPECT_NE(differing_bytes(carried[0], first[0]), 0u);
  GstStructure* stats = nullptr;
  g_object_get(h->element, "stats", &stats, nullptr);
  guint64 resets = 0, done = 0;
  ASSERT_TRUE(gst_structure_get_uint64(stats, "resets", &resets));
  ASSERT_TRUE(gst_structure_get_uint64(stats, "frames", &done));
  EXPECT_GE(resets, 3u);  // the first segment, the flush (and its segment), the new segment
  EXPECT_EQ(done, 3 * frames.size() + 2 * other.size() + frames.size());
  gst_structure_free(stats);
  gst_harness_teardown(h);
}

// EOS comes after every frame pushed before it, each with its output.
TEST(Element, EosDrainsEveryFrame) {
  std::mt19937_64 rng(seed() + 12);
  const int width = 33, height = 21, count = 7;
  GstHarness* h = stylepipe_harness("pipeline:\n  - xbr: {scale: 3}\n");
  gst_harness_set_src_caps_str(h, caps_text("RGBA", width, height).c_str());
  for (int i = 0; i < count; ++i) ASSERT_EQ(gst_harness_push(h, buffer_of(photo(width, height, rng), i)), GST_FLOW_OK);
  ASSERT_TRUE(gst_harness_push_event(h, gst_event_new_eos()));
  EXPECT_EQ(gst_harness_buffers_received(h), guint(count));
  int buffers = 0;
  while (GstBuffer* b = gst_harness_try_pull(h)) {
    EXPECT_EQ(gst_buffer_get_size(b), size_t(width) * 3 * size_t(height) * 3 * 4);
    EXPECT_EQ(GST_BUFFER_PTS(b), gst_util_uint64_scale(guint64(buffers), GST_SECOND, 30)) << "timestamps kept";
    gst_buffer_unref(b);
    ++buffers;
  }
  EXPECT_EQ(buffers, count);
  bool eos = false;
  while (GstEvent* e = gst_harness_try_pull_event(h)) {
    eos = eos || GST_EVENT_TYPE(e) == GST_EVENT_EOS;
    gst_event_unref(e);
  }
  EXPECT_TRUE(eos);
  gst_harness_teardown(h);
}

// The stats' latency is each frame's time inside the element: never more than
// the harness's push of it takes (the push returns once the frame is out),
// and counted once a frame.
TEST(Element, LatencyStatsAreEachFramesTimeInTheElement) {
  std::mt19937_64 rng(seed() + 13);
  const int width = 96, height = 64, count = 12;
  GstHarness* h = stylepipe_harness(kTemporal);
  gst_harness_set_src_caps_str(h, caps_text("RGBA", width, height).c_str());
  std::vector<int64_t> push_us;
  for (int i = 0; i < count; ++i) {
    GstBuffer* frame = buffer_of(photo(width, height, rng), i);
    const auto start = std::chrono::steady_clock::now();
    ASSERT_EQ(gst_harness_push(h, frame), GST_FLOW_OK);
    push_us.push_back(std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - start).count());
    gst_buffer_unref(gst_harness_pull(h));
  }
  GstStructure* stats = nullptr;
  g_object_get(h->element, "stats", &stats, nullptr);
  guint64 frames = 0, p50 = 0, p99 = 0, max = 0;
  ASSERT_TRUE(gst_structure_get_uint64(stats, "latency-frames", &frames));
  ASSERT_TRUE(gst_structure_get_uint64(stats, "latency-p50-us", &p50));
  ASSERT_TRUE(gst_structure_get_uint64(stats, "latency-p99-us", &p99));
  ASSERT_TRUE(gst_structure_get_uint64(stats, "latency-max-us", &max));
  gst_structure_free(stats);
  std::sort(push_us.begin(), push_us.end());
  EXPECT_EQ(frames, guint64(count));
  EXPECT_GT(p50, 0u) << "a pencil frame takes time";
  EXPECT_LE(p50, p99);
  EXPECT_LE(p99, max);
  EXPECT_LE(max, guint64(push_us.back())) << "longer inside the element than the whole push";
  EXPECT_LE(p50, guint64(push_us[count / 2])) << "median";
  gst_harness_teardown(h);
}

// The element holds no frame in flight: upstream's latency goes through as it is.
TEST(Element, AnswersTheLatencyQueryWithUpstreamsAndNoneOfItsOwn) {
  GstHarness* h = stylepipe_harness("pipeline:\n  - xbr: {scale: 2}\n");
  gst_harness_set_src_caps_str(h, caps_text("RGBA", 16, 16).c_str());
  gst_harness_set_upstream_latency(h, 7 * GST_MSECOND);
  GstQuery* query = gst_query_new_latency();
  ASSERT_TRUE(gst_pad_peer_query(h->sinkpad, query));
  gboolean live = FALSE;
  GstClockTime min = 0, max = 0;
  gst_query_parse_latency(query, &live, &min, &max);
  EXPECT_TRUE(live);
  EXPECT_EQ(min, 7 * GST_MSECOND);
  gst_query_unref(query);
  gboolean qos = FALSE;
  g_object_get(h->element, "qos", &qos, nullptr);
  EXPECT_TRUE(qos) << "QoS is on: late frames are dropped in live pipelines";
  gst_harness_teardown(h);
}

// Runs `description` to the end (or to its first error); returns the error's
// text and debug, or "" where it finished.
std::string run_pipeline(const std::string& description, std::vector<std::string>* warnings = nullptr) {
  GError* error = nullptr;
  GstElement* pipeline = gst_parse_launch(description.c_str(), &error);
  if (error) {
    ADD_FAILURE() << description << ": " << error->message;
    g_error_free(error);
    if (pipeline) gst_object_unref(pipeline);
    return "parse error";
  }
  gst_element_set_state(pipeline, GST_STATE_PLAYING);
  GstBus* bus = gst_element_get_bus(pipeline);
  std::string result;
  while (true) {
    GstMessage* m = gst_bus_timed_pop_filtered(bus, 60 * GST_SECOND,
                                               GstMessageType(GST_MESSAGE_ERROR | GST_MESSAGE_EOS | GST_MESSAGE_WARNING));
    if (!m) {
      result = "timeout";
      break;
    }
    if (GST_MESSAGE_TYPE(m) == GST_MESSAGE_WARNING) {
      GError* e = nullptr;
      gchar* debug = nullptr;
      gst_message_parse_warning(m, &e, &debug);
      if (warnings) warnings->push_back(e->message);
      g_error_free(e);
      g_free(debug);
      gst_message_unref(m);
      continue;
    }
    if (GST_MESSAGE_TYPE(m) == GST_MESSAGE_ERROR) {
      GError* e = nullptr;
      gchar* debug = nullptr;
      gst_message_parse_error(m, &e, &debug);
      result = std::string(e->message) + "\n" + (debug ? debug : "");
      g_error_free(e);
      g_free(debug);
    }
    gst_message_unref(m);
    break;
  }
  gst_element_set_state(pipeline, GST_STATE_NULL);
  gst_object_unref(bus);
  gst_object_unref(pipeline);
  return result;
}

// A config that does not validate fails NULL -> READY, and the bus error names
// the file, line and column of the problem.
TEST(Element, BadConfigFailsGoingToReadyWithItsLineOnTheBus) {
  TempDir dir;
  const std::string path = dir.file("bad.yaml");
  std::ofstream(path) << "pipeline:\n  - pencil: {color: true}\n  - xbr: {scale: 9}\n";

  GstElement* element = gst_element_factory_make("stylepipe", nullptr);
  ASSERT_NE(element, nullptr);
  g_object_set(element, "config", path.c_str(), nullptr);
  GstBus* bus = gst_bus_new();
  gst_element_set_bus(element, bus);
  EXPECT_EQ(gst_element_set_state(element, GST_STATE_READY), GST_STATE_CHANGE_FAILURE);
  GstMessage* m = gst_bus_pop_filtered(bus, GST_MESSAGE_ERROR);
  ASSERT_NE(m, nullptr) << "no error on the bus";
  GError* e = nullptr;
  gchar* debug = nullptr;
  gst_message_parse_error(m, &e, &debug);
  EXPECT_NE(std::string(e->message).find(path + ":3:18: error:"), std::string::npos) << e->message;
  EXPECT_TRUE(g_error_matches(e, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_SETTINGS)) << e->message;
  g_error_free(e);
  g_free(debug);
  gst_message_unref(m);
  gst_element_set_state(element, GST_STATE_NULL);
  gst_element_set_bus(element, nullptr);
  gst_object_unref(bus);
  gst_object_unref(element);

  // In a pipeline, and inline: the error names the property.
  const std::string error = run_pipeline(
      "videotestsrc num-buffers=2 ! stylepipe backend=cpu pipeline=\"pipeline:\n  - pencl: {}\n\" ! fakesink");
  EXPECT_NE(error.find("<pipeline property>:2:5: error:"), std::string::npos) << error;
  const std::string missing = run_pipeline("videotestsrc num-buffers=2 ! stylepipe config=" + dir.file("none.yaml") +
                                           " ! fakesink");
  EXPECT_NE(missing.find("none.yaml"), std::string::npos) << missing;
  EXPECT_NE(run_pipeline("videotestsrc num-buffers=2 ! stylepipe ! fakesink").find("no config"), std::string::npos);
}

// backend=auto without CUDA says so once (a warning, not a silent fallback);
// backend=cuda without CUDA is an error at READY.
TEST(Element, FallbackToTheCpuWarnsAndCudaWithoutADeviceFails) {
  GstElement* element = gst_element_factory_make("stylepipe", nullptr);
  g_object_set(element, "pipeline", "pipeline: [{xbr: {scale: 2}}]", nullptr);
  gst_util_set_object_arg(G_OBJECT(element), "backend", "cuda");
  GstBus* bus = gst_bus_new();
  gst_element_set_bus(element, bus);
  const bool cuda = gst_element_set_state(element, GST_STATE_READY) != GST_STATE_CHANGE_FAILURE;
  gst_element_set_state(element, GST_STATE_NULL);
  if (!cuda) {
    GstMessage* m = gst_bus_pop_filtered(bus, GST_MESSAGE_ERROR);
    ASSERT_NE(m, nullptr);
    GError* e = nullptr;
    gst_message_parse_error(m, &e, nullptr);
    EXPECT_NE(std::string(e->message).find("cuda"), std::string::npos) << e->message;
    EXPECT_TRUE(g_error_matches(e, GST_RESOURCE_ERROR, GST_RESOURCE_ERROR_FAILED)) << e->message;
    g_error_free(e);
    gst_message_unref(m);
  }
  gst_bus_set_flushing(bus, TRUE);
  gst_bus_set_flushing(bus, FALSE);

  gst_util_set_object_arg(G_OBJECT(element), "backend", "auto");
  for (int i = 0; i < 2; ++i) {
    ASSERT_NE(gst_element_set_state(element, GST_STATE_READY), GST_STATE_CHANGE_FAILURE);
    gst_element_set_state(element, GST_STATE_NULL);
  }
  int warnings = 0;
  while (GstMessage* m = gst_bus_pop_filtered(bus, GST_MESSAGE_WARNING)) {
    GError* e = nullptr;
    gst_message_parse_warning(m, &e, nullptr);
    EXPECT_NE(std::string(e->message).find("runs on the CPU"), std::string::npos) << e->message;
    g_error_free(e);
    gst_message_unref(m);
    ++warnings;
  }
  EXPECT_EQ(warnings, cuda ? 0 : 1) << "the fallback says so once";
  gst_element_set_bus(element, nullptr);
  gst_object_unref(bus);
  gst_object_unref(element);
}

// The caps: an odd size scales by the chain (xbr 3: 3x), the format is RGBA,
// the rate and aspect ratio go through; a size downstream cannot take fails
// negotiation instead of being stretched.
TEST(Element, CapsFollowTheChainsOutputSize) {
  GstHarness* h = stylepipe_harness("pipeline:\n  - xbr: {scale: 3}\n");
  gst_harness_set_src_caps_str(h, "video/x-raw,format=BGRx,width=31,height=17,framerate=25/1,pixel-aspect-ratio=1/1");
  std::mt19937_64 rng(seed() + 13);
  Picture p = photo(31, 17, rng);
  ASSERT_EQ(gst_harness_push(h, buffer_of(p, 0, true)), GST_FLOW_OK);
  gst_buffer_unref(gst_harness_pull(h));
  GstCaps* caps = gst_pad_get_current_caps(h->sinkpad);
  GstCaps* expected = gst_caps_from_string(
      "video/x-raw,format=RGBA,width=93,height=51,framerate=25/1,pixel-aspect-ratio=1/1");
  EXPECT_TRUE(gst_caps_is_subset(caps, expected)) << gst_caps_to_string(caps);
  gst_caps_unref(expected);
  gst_caps_unref(caps);
  gst_harness_teardown(h);

  const std::string error = run_pipeline(
      "videotestsrc num-buffers=2 ! video/x-raw,format=RGBA,width=31,height=17 ! stylepipe backend=cpu "
      "pipeline=\"pipeline: [{xbr: {scale: 3}}]\" ! video/x-raw,width=62 ! fakesink");
  EXPECT_NE(error.find("not-negotiated"), std::string::npos) << error;
}

gint live_objects(GstTracer* leaks) {
  // Streaming threads drop their last references after the state change
  // has returned: wait for them, so that no object is finalized while the
  // tracer lists (and refs) the live ones.
  gst_task_cleanup_all();
  GstStructure* info = nullptr;
  g_signal_emit_by_name(leaks, "get-live-objects", &info);
  const GValue* list = gst_structure_get_value(info, "live-objects-list");
  const gint count = list ? gint(gst_value_list_get_size(list)) : -1;
  gst_structure_free(info);
  return count;
}

long rss_kib() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line))
    if (line.rfind("VmRSS:", 0) == 0) return std::strtol(line.c_str() + 6, nullptr, 10);
  return -1;
}

// NULL -> PLAYING -> NULL loops leave no GStreamer object alive (the leaks
// tracer's count of live objects is where it was after the first loop) and
// the process's memory flat (the chains and their buffers are freed).
TEST(Element, StateChangeLoopsLeakNothing) {
  GstTracer* leaks = nullptr;
  GList* tracers = gst_tracing_get_active_tracers();
  for (GList* t = tracers; t; t = t->next)
    if (g_str_equal(G_OBJECT_TYPE_NAME(t->data), "GstLeaksTracer")) leaks = GST_TRACER(gst_object_ref(t->data));
  g_list_free_full(tracers, gst_object_unref);
  if (!leaks) GTEST_SKIP() << "the leaks tracer is not active (GST_TRACERS=leaks)";

  const std::string description =
      "videotestsrc num-buffers=4 pattern=ball ! video/x-raw,format=RGBA,width=321,height=241 ! "
      "stylepipe backend=cpu pipeline=\"pipeline: [{pencil: {color: true, temporal_smoothing: 0.8}}, "
      "{xbr: {scale: 2}}]\" ! fakesink";
  auto loop = [&] { ASSERT_EQ(run_pipeline(description), ""); };
  loop();
  loop();
  const gint objects = live_objects(leaks);
  const long rss = rss_kib();
  for (int i = 0; i < 25; ++i) loop();
  EXPECT_LE(live_objects(leaks), objects) << "GStreamer objects left alive by 25 NULL->PLAYING->NULL loops";
  const long grown = rss_kib() - rss;
#ifndef SP_ASAN  // ASan's quarantine keeps freed memory resident
  EXPECT_LT(grown, 16 * 1024) << "the memory grew by " << grown << " KiB over 25 loops";
#endif

  // And the element alone, NULL -> READY -> PLAYING -> NULL, without data.
  for (int i = 0; i < 25; ++i) {
    GstElement* element = gst_element_factory_make("stylepipe", nullptr);
    gst_util_set_object_arg(G_OBJECT(element), "backend", "cpu");
    g_object_set(element, "pipeline", "pipeline: [{pencil: {}}]", nullptr);
    ASSERT_NE(gst_element_set_state(element, GST_STATE_PLAYING), GST_STATE_CHANGE_FAILURE);
    gst_element_set_state(element, GST_STATE_NULL);
    gst_object_unref(element);
  }
  EXPECT_LE(live_objects(leaks), objects);
  gst_object_unref(leaks);
}

}  // namespace

int main(int argc, char** argv) {
  // The build's plugin and CLI, unless the caller names others.
  setenv("GST_PLUGIN_PATH", STYLEPIPE_GST_PLUGIN_DIR, 0);
  setenv("GST_REGISTRY_1_0", STYLEPIPE_GST_PLUGIN_DIR "/test-registry.bin", 0);
  setenv("STYLEPIPE_BINARY", STYLEPIPE_BINARY, 0);
  setenv("GST_TRACERS", "leaks", 0);
  // Plugins are scanned in this process, not in gst-plugin-scanner: in an ASan
  // build only this (instrumented) process can load the plugin.
  setenv("GST_REGISTRY_FORK", "no", 0);
  gst_init(&argc, &argv);
  ::testing::InitGoogleTest(&argc, argv);
  std::printf("[stylepipe gstreamer tests] random seed %llu (set SP_TEST_SEED to replay)\n",
              static_cast<unsigned long long>(seed()));
  const int status = RUN_ALL_TESTS();
  gst_deinit();
  return status;
}
