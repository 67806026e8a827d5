#include "orchestration/bench.h"

#include <fmt/format.h>

#include <chrono>
#include <cmath>

#include "codecs/media_reader.h"
#include "pipeline/convert.h"
#include "pipeline/device.h"
#include "pipeline/frame_engine.h"
#include "pipeline/log.h"
#include "pipeline/run_stats.h"
#include "orchestration/gpu_need.h"
#include "orchestration/transcode.h"

// The device-resident loop times CUDA events: CUDA builds only.
#if STYLEPIPE_HAS_CUDA
#include <cuda_runtime.h>

#include "pipeline/cuda_check.h"
#include "pipeline/frame_graphs.h"
#endif

namespace sp {
namespace {

using Clock = std::chrono::steady_clock;
constexpr int kDistinctFrames = 8;  // rotate inputs so caches don't flatter the numbers
constexpr int kBenchTag = 4000;

uint32_t hash32(uint32_t x) {
  x ^= x >> 16;
  x *= 0x7feb352dU;
  x ^= x >> 15;
  x *= 0x846ca68bU;
  x ^= x >> 16;
  return x;
}

// Photo-like RGBA content: gradients, a moving disc, hard-edged bars, noise.
void synthesize_frame(const RgbaView& v, int index) {
  const double cx = v.width * (0.3 + 0.05 * index), cy = v.height * 0.5, r = 0.2 * std::min(v.width, v.height);
  for (int y = 0; y < v.height; ++y) {
    uint8_t* row = v.row(y);
    for (int x = 0; x < v.width; ++x) {
      const uint32_t n = hash32(uint32_t(x) * 73856093u ^ uint32_t(y) * 19349663u ^ uint32_t(index) * 83492791u);
      const bool disc = (x - cx) * (x - cx) + (y - cy) * (y - cy) < r * r;
      const bool bar = ((x + 7 * index) / 40) % 5 == 0;
      row[4 * x + 0] = uint8_t(std::min(255.0, 255.0 * x / v.width + (n & 15)));
      row[4 * x + 1] = uint8_t(disc ? 220 - (n >> 8 & 31) : 255.0 * y / v.height);
      row[4 * x + 2] = uint8_t(bar ? 20 + (n >> 16 & 15) : 128 + 100 * std::sin(x * 0.02 + index));
      row[4 * x + 3] = 255;
    }
  }
}

struct SourceFrames {
  Size size;
  PixelFormat format;
  ColorSpec color;
  std::vector<PooledBuffer> buffers;  // pinned on CUDA, host on CPU
  std::vector<PlanarView> views;
  std::string description;
};

SourceFrames load_sources(const BenchOptions& o, BufferPool& pool, MemoryKind kind) {
  SourceFrames s;
  auto add = [&](const PlanarView& picture) {
    const PlaneLayout layout = plane_layout(picture.format, picture.width, picture.height);
    s.buffers.emplace_back(pool, BufferPool::Key{kind, picture.width, picture.height, kBenchTag, layout.total_bytes()});
    s.views.push_back(tight_view(s.buffers.back().data(), picture.format, {picture.width, picture.height}));
    copy_picture_host(picture, s.views.back());
  };
  if (!o.input.empty()) {
    InputOptions in;
    in.url = o.input;
    in.max_frames = kDistinctFrames;
    MediaReader reader(in);
    MediaItem item;
    while (s.views.size() < kDistinctFrames && reader.next(item)) {
      if (item.kind != MediaItem::Kind::video) continue;
      const PlanarView v = item.frame.view();
      if (!s.views.empty() && (v.width != s.size.width || v.height != s.size.height || v.format != s.format)) break;
      s.size = {v.width, v.height};
      s.format = v.format;
      s.color = item.frame.color;
      add(v);
    }
    if (s.views.empty()) throw Error(ExitCode::data_error, o.input + ": no video frames to benchmark");
    s.description = fmt::format("{} ({} distinct frames)", o.input, s.views.size());
    return s;
  }
  s.size = o.size;
  s.format = o.format;
  std::vector<uint8_t> rgba(size_t(o.size.width) * o.size.height * 4);
  const RgbaView rgba_view{rgba.data(), o.size.width, o.size.height, size_t(o.size.width) * 4};
  std::vector<uint8_t> planar(plane_layout(o.format, o.size.width, o.size.height).total_bytes());
  for (int i = 0; i < kDistinctFrames; ++i) {
    synthesize_frame(rgba_view, i);
    const PlanarView p = tight_view(planar.data(), o.format, o.size);
    convert_from_rgba_cpu(rgba_view, s.color, p);
    add(p);
  }
  s.description = fmt::format("generated {}x{} {}", o.size.width, o.size.height, to_string(o.format));
  return s;
}

nlohmann::json step_json(const std::string& name, const Samples& ms, double floor_bytes, double peak_gbs) {
  const double p50 = ms.median();
  const double gbs = p50 > 0 ? floor_bytes / (p50 * 1e-3) / 1e9 : 0;
  nlohmann::json j = {{"name", name}, {"p50_ms", p50}, {"p95_ms", ms.percentile(95)},
                      {"floor_bytes", floor_bytes}, {"achieved_gbs", gbs}};
  if (peak_gbs > 0) {
    j["floor_ms"] = floor_bytes / (peak_gbs * 1e9) * 1e3;
    j["percent_of_peak"] = 100.0 * gbs / peak_gbs;
  }
  return j;
}

#if STYLEPIPE_HAS_CUDA
// Device-resident loop: frames already on the GPU, no transfers. Events
// around every step of every frame give per-step percentiles; a second pass
// without them, timed by one pair, gives the throughput.
nlohmann::json bench_device(const BenchOptions& o, const SourceFrames& src, BufferPool& pool, double peak_gbs) {
  // Frame f runs on lane f mod K, each lane its own stream and buffers, as
  // the frame engine runs K frames in flight.
  const int lanes = std::max(1, o.frames_in_flight);
  StageChain chain(o.stages, Backend::cuda, pool, lanes);
  const Size out = chain.configure(src.size);
  const PlaneLayout in_layout = plane_layout(src.format, src.size.width, src.size.height);
  const PlaneLayout out_layout = plane_layout(src.format, out.width, out.height);
  std::vector<PooledBuffer> device_in;
  for (const auto& v : src.views) {
    device_in.emplace_back(pool, BufferPool::Key{MemoryKind::device, src.size.width, src.size.height, kBenchTag + 1,
                                                 in_layout.total_bytes()});
    const PlanarView d = tight_view(device_in.back().data(), src.format, src.size);
    for (int i = 0; i < in_layout.count; ++i)
      SP_CUDA_CHECK(cudaMemcpy(d.plane[i], v.plane[i], in_layout.bytes(i), cudaMemcpyHostToDevice));
  }
  struct Lane {
    PooledBuffer rgba_in, rgba_out, planar_out;
    cudaStream_t stream = nullptr;
    cudaEvent_t end = nullptr;
  };
  std::vector<Lane> lane(static_cast<size_t>(lanes));
  for (Lane& l : lane) {
    l.rgba_in = PooledBuffer(pool, {MemoryKind::device, src.size.width, src.size.height, kBenchTag + 2,
                                    size_t(src.size.width) * src.size.height * 4});
    l.rgba_out = PooledBuffer(pool, {MemoryKind::device, out.width, out.height, kBenchTag + 3, size_t(out.width) * out.height * 4});
    l.planar_out = PooledBuffer(pool, {MemoryKind::device, out.width, out.height, kBenchTag + 4, out_layout.total_bytes()});
    SP_CUDA_CHECK(cudaStreamCreateWithFlags(&l.stream, cudaStreamNonBlocking));
    SP_CUDA_CHECK(cudaEventCreate(&l.end));
  }
  const int total = o.warmup + o.frames;
  const size_t marks_per_frame = chain.size() + 3;
  std::vector<cudaEvent_t> events(size_t(total) * marks_per_frame);
  for (auto& e : events) SP_CUDA_CHECK(cudaEventCreate(&e));
  cudaEvent_t loop_start, loop_end, steps_start, steps_end;
  for (cudaEvent_t* e : {&loop_start, &loop_end, &steps_start, &steps_end}) SP_CUDA_CHECK(cudaEventCreate(e));
  const cudaStream_t first = lane[0].stream;
  // Every lane's work after `at` follows every lane's work before it.
  const auto join_lanes = [&](cudaEvent_t at) {
    for (Lane& l : lane) SP_CUDA_CHECK(cudaEventRecord(l.end, l.stream));
    for (Lane& l : lane) SP_CUDA_CHECK(cudaStreamWaitEvent(first, l.end, 0));
    SP_CUDA_CHECK(cudaEventRecord(at, first));
    for (Lane& l : lane) SP_CUDA_CHECK(cudaStreamWaitEvent(l.stream, at, 0));
  };
  // Frame f on its lane; with `e`, an event around each step.
  const auto enqueue = [&](int f, cudaEvent_t* e) {
    Lane& l = lane[size_t(f % lanes)];
    const RgbaView vin{l.rgba_in.data(), src.size.width, src.size.height, size_t(src.size.width) * 4};
    const RgbaView vout = chain.size() == 0 ? vin : RgbaView{l.rgba_out.data(), out.width, out.height, size_t(out.width) * 4};
    const PlanarView pout = tight_view(l.planar_out.data(), src.format, out);
    const PlanarView in = tight_view(device_in[f % device_in.size()].data(), src.format, src.size);
    if (e) SP_CUDA_CHECK(cudaEventRecord(e[0], l.stream));
    convert_to_rgba_cuda(in, src.color, vin, l.stream);
    SP_CUDA_CHECK_LAUNCH();
    FrameInfo info;
    info.index = f;
    const std::vector<cudaEvent_t> marks = e ? std::vector<cudaEvent_t>(e + 1, e + 2 + chain.size()) : std::vector<cudaEvent_t>{};
    chain.run_cuda(vin, vout, info, l.stream, marks, f % lanes);
    convert_from_rgba_cuda(vout, src.color, pout, l.stream);
    SP_CUDA_CHECK_LAUNCH();
    if (e) SP_CUDA_CHECK(cudaEventRecord(e[marks_per_frame - 1], l.stream));
  };
  // Two passes: the steps' times from events around each, then the
  // throughput without them. Recording an event costs the host ~2 us, and a
  // small frame (xbr at 256x240) is ~13 us of host launches: the step events
  // would be a third of what the lanes' throughput measures. The second pass
  // replays each frame as a CUDA graph where the chain allows it, as the
  // frame engine does (frame_graphs.h); its graphs are captured before it.
  for (int f = 0; f < total; ++f) {
    if (f == o.warmup) join_lanes(steps_start);
    enqueue(f, &events[size_t(f) * marks_per_frame]);
  }
  join_lanes(steps_end);
  FrameGraphs graphs;
  const bool replay = chain.replayable() && graphs.enabled();
  const auto enqueue_untimed = [&](int f) {
    if (replay) {
      const FrameGraphs::Key key{uintptr_t(f % lanes), f % device_in.size()};
      graphs.run(key, lane[size_t(f % lanes)].stream, [&] { enqueue(f, nullptr); });
    } else {
      enqueue(f, nullptr);
    }
  };
  if (replay)
    for (int f = 0; f < lanes * int(device_in.size()); ++f) enqueue_untimed(f);
  join_lanes(loop_start);
  const auto host_start = std::chrono::steady_clock::now();
  for (int f = total; f < total + o.frames; ++f) enqueue_untimed(f);
  const double host_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - host_start).count();
  join_lanes(loop_end);
  SP_CUDA_CHECK(cudaEventSynchronize(loop_end));

  std::vector<Samples> steps(marks_per_frame - 1);
  for (int f = o.warmup; f < total; ++f) {
    cudaEvent_t* e = &events[size_t(f) * marks_per_frame];
    for (size_t i = 0; i + 1 < marks_per_frame; ++i) {
      float ms = 0;
      SP_CUDA_CHECK(cudaEventElapsedTime(&ms, e[i], e[i + 1]));
      steps[i].add(ms);
    }
  }
  float loop_ms = 0, steps_ms = 0;
  SP_CUDA_CHECK(cudaEventElapsedTime(&loop_ms, loop_start, loop_end));
  SP_CUDA_CHECK(cudaEventElapsedTime(&steps_ms, steps_start, steps_end));
  for (auto& e : events) SP_CUDA_CHECK(cudaEventDestroy(e));
  for (cudaEvent_t e : {loop_start, loop_end, steps_start, steps_end}) SP_CUDA_CHECK(cudaEventDestroy(e));
  for (Lane& l : lane) {
    SP_CUDA_CHECK(cudaEventDestroy(l.end));
    SP_CUDA_CHECK(cudaStreamDestroy(l.stream));
  }

  nlohmann::json rows = nlohmann::json::array();
  rows.push_back(step_json("convert_in", steps[0], convert_floor_bytes(src.format, src.size), peak_gbs));
  double chain_floor = convert_floor_bytes(src.format, src.size) + convert_floor_bytes(src.format, out);
  for (size_t i = 0; i < chain.size(); ++i) {
    rows.push_back(step_json(chain.name(i), steps[i + 1], chain.floor_bytes(i), peak_gbs));
    if (const StageCounters c = chain.counters(i); !c.empty()) rows.back()["counters"] = c;  // e.g. solver iterations
    chain_floor += chain.floor_bytes(i);
  }
  rows.push_back(step_json("convert_out", steps.back(), convert_floor_bytes(src.format, out), peak_gbs));
  const double per_frame_ms = loop_ms / o.frames;
  return {{"steps", rows},
          {"output_size", fmt::format("{}x{}", out.width, out.height)},
          {"device_fps", 1e3 / per_frame_ms},
          {"device_fps_with_step_events", 1e3 * o.frames / steps_ms},
          {"frame_graphs", replay},
          {"host_enqueue_us_per_frame", 1e3 * host_ms / o.frames},
          {"frames_in_flight", lanes},
          {"extra_lane_bytes", chain.extra_lane_bytes()},
          {"device_ms_per_frame", per_frame_ms},
          {"chain_floor_bytes", chain_floor},
          {"chain_floor_ms", peak_gbs > 0 ? chain_floor / (peak_gbs * 1e9) * 1e3 : 0.0}};
}

#endif

// Through the frame engine: host frames in, host frames out, K frames in flight.
nlohmann::json bench_engine(const BenchOptions& o, const SourceFrames& src, BufferPool& pool, Backend backend) {
  auto engine = backend == Backend::cuda ? make_cuda_engine(o.stages, pool, o.frames_in_flight)
                                         : make_cpu_engine(o.stages, pool);
  EngineFormats formats;
  formats.input_size = src.size;
  formats.input_format = src.format;
  formats.input_color = src.color;
  formats.output_format = src.format;
  formats.output_color = src.color;
  engine->configure(formats);
  RunStats stats;
  stats.stages.resize(engine->chain().size());
  Clock::time_point start;
  const bool pinned = backend == Backend::cuda;
  const int total = o.warmup + o.frames;
  for (int f = 0; f < total; ++f) {
    if (f == o.warmup) {
      while (engine->in_flight()) engine->take_oldest();
      start = Clock::now();
    }
    while (!engine->can_submit()) {
      EngineFrame done = engine->take_oldest();
      if (f > o.warmup) stats.add_frame(done.timings);
    }
    FrameInfo info;
    info.index = f;
    engine->submit(src.views[f % src.views.size()], info, f, pinned);
  }
  while (engine->in_flight()) stats.add_frame(engine->take_oldest().timings);
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  nlohmann::json j = {{"fps", o.frames / seconds},
                      {"frames_in_flight", backend == Backend::cuda ? o.frames_in_flight : 1},
                      {"upload_ms", stats.upload_ms.summary()},
                      {"download_ms", stats.download_ms.summary()}};
  if (backend == Backend::cpu) {
    nlohmann::json rows = nlohmann::json::array();
    const Size out = engine->chain().output_size();
    rows.push_back(step_json("convert_in", stats.convert_in_ms, convert_floor_bytes(src.format, src.size), 0));
    for (size_t i = 0; i < engine->chain().size(); ++i)
      rows.push_back(step_json(engine->chain().name(i), stats.stages[i].ms, engine->chain().floor_bytes(i), 0));
    rows.push_back(step_json("convert_out", stats.convert_out_ms, convert_floor_bytes(src.format, out), 0));
    j["steps"] = rows;
  }
  const EngineTraffic t = engine->traffic();
  j["host_to_device_bytes_per_frame"] = double(t.host_to_device_bytes) / total;
  j["device_to_host_bytes_per_frame"] = double(t.device_to_host_bytes) / total;
  return j;
}

}  // namespace

nlohmann::json run_bench(const BenchOptions& o) {
  const Choice backend = select_backend(o.backend);
  BufferPool pool;
  const bool cuda = backend.name == "cuda";
  const SourceFrames src = load_sources(o, pool, cuda ? MemoryKind::pinned_host : MemoryKind::host);
  nlohmann::json report = {{"backend", backend.name}, {"source", src.description},
                           {"frames", o.frames}, {"warmup", o.warmup}};
  nlohmann::json stage_names = nlohmann::json::array();
  for (const auto& s : o.stages) stage_names.push_back(s.name);
  report["stages"] = stage_names;
  if (cuda) {
#if STYLEPIPE_HAS_CUDA  // select_backend never chooses CUDA where the build lacks it
    const DeviceProperties props = current_device_properties();
    report["device"] = {{"name", props.name}, {"memory_bandwidth_gbs", props.memory_bandwidth_gbs}};
    report["device_resident"] = bench_device(o, src, pool, props.memory_bandwidth_gbs);
    // What --jobs auto takes this chain's GPU time to be at most (an H200's, orchestration/gpu_need.h).
    if (const std::optional<GpuCost> bound = chain_gpu_cost(o.stages, src.size))
      report["device_resident"]["jobs_auto_bound_ms"] = bound->milliseconds;
    report["with_transfers"] = bench_engine(o, src, pool, Backend::cuda);
#endif
  } else {
    report["with_transfers"] = bench_engine(o, src, pool, Backend::cpu);
  }
  const PoolStats ps = pool.stats();
  report["pool"] = {{"hits", ps.hits}, {"misses", ps.misses}, {"high_water_bytes", ps.high_water_bytes}};
  return report;
}

std::string bench_table(const nlohmann::json& r) {
  std::string out = fmt::format("stylepipe bench: {} on {}, {} frames after {} warm-up\n",
                                r["source"].get<std::string>(), r["backend"].get<std::string>(),
                                r["frames"].get<int>(), r["warmup"].get<int>());
  const bool cuda = r.contains("device_resident");
  if (cuda)
    out += fmt::format("device: {} (memory bandwidth {:.0f} GB/s)\n", r["device"]["name"].get<std::string>(),
                       r["device"]["memory_bandwidth_gbs"].get<double>());
  const nlohmann::json& steps = cuda ? r["device_resident"]["steps"] : r["with_transfers"]["steps"];
  out += fmt::format("{:<14} {:>9} {:>9} {:>10} {:>9} {:>9} {:>7}\n", "step", "p50 ms", "p95 ms", "floor MB",
                     "floor ms", "GB/s", "% peak");
  for (const auto& s : steps) {
    out += fmt::format("{:<14} {:>9.4f} {:>9.4f} {:>10.2f} {:>9.4f} {:>9.1f} {:>7.1f}\n", s["name"].get<std::string>(),
                       s["p50_ms"].get<double>(), s["p95_ms"].get<double>(), s["floor_bytes"].get<double>() / 1e6,
                       s.value("floor_ms", 0.0), s["achieved_gbs"].get<double>(), s.value("percent_of_peak", 0.0));
    if (s.contains("counters"))
      for (const auto& [name, value] : s["counters"].items())
        out += fmt::format("  {} (last frame): {:g}\n", name, value.get<double>());
  }
  if (cuda) {
    const auto& d = r["device_resident"];
    out += fmt::format("chain, device-resident, {} in flight{}: {:.1f} frames/s ({:.4f} ms/frame, floor {:.4f} ms; "
                       "host {:.1f} us/frame)\n",
                       d.value("frames_in_flight", 1), d.value("frame_graphs", false) ? ", graphs" : "",
                       d["device_fps"].get<double>(), d["device_ms_per_frame"].get<double>(),
                       d["chain_floor_ms"].get<double>(), d.value("host_enqueue_us_per_frame", 0.0));
    if (d.contains("jobs_auto_bound_ms")) {
      const double bound = d["jobs_auto_bound_ms"].get<double>(), measured = d["device_ms_per_frame"].get<double>();
      out += fmt::format("--jobs auto takes this chain to need {:.4f} ms of a GPU a frame at most{}\n", bound,
                         measured > bound ? " (an H200's figure): this GPU took more" : "");
    }
  }
  const auto& t = r["with_transfers"];
  out += fmt::format("chain with host transfers ({} in flight): {:.1f} frames/s, H2D {:.2f} MB/frame, D2H {:.2f} MB/frame\n",
                     t["frames_in_flight"].get<int>(), t["fps"].get<double>(),
                     t["host_to_device_bytes_per_frame"].get<double>() / 1e6,
                     t["device_to_host_bytes_per_frame"].get<double>() / 1e6);
  return out;
}

}  // namespace sp
