// The CUDA backend of the stage: the CPU's frame (halftone_stage.cpp) with
// device-side counts. Nothing here waits for the device: the per-frame
// numbers are computed by one device thread, and points_out is written by a
// host callback queued on the stream.
#include <cub/block/block_reduce.cuh>
#include <cub/device/device_scan.cuh>
#include <cub/device/device_select.cuh>
#include <thrust/iterator/counting_iterator.h>
#include <thrust/iterator/transform_iterator.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <string>

#include "pipeline/cuda_check.h"
#include "stages/halftone/attraction.h"
#include "stages/halftone/direct.h"
#include "stages/halftone/fastsum_gpu.h"
#include "stages/halftone/halftone.h"
#include "stages/halftone/halftone_gpu_profile.h"
#include "stages/halftone/halftone_profile.h"
#include "stages/halftone/lookup_map.h"

namespace sp::halftone {

// What the points_out callback needs. The host runs ahead of the device, so
// each queued frame gets its own slot of a ring (it only carries the frame
// index); the dots and the count are in pinned buffers that the stream
// ordering protects (the next frame's copies run after this callback).
struct PointsSink {
  std::string pattern;
  Size size;
  float radius = 0;
  std::array<double, 3> background{}, dot{};
  const FrameNumbers* numbers = nullptr;  // pinned
  const float2* pos = nullptr;            // pinned
};

struct PointsJob {
  const PointsSink* sink = nullptr;
  int64_t frame = 0;
};
constexpr int kPointsRing = 64;  // more than frames can be in flight (at most 16)

struct HalftoneStage::Cuda {
  Profile profile;
  FastsumGpu fastsum;  // with repulsion: direct, still the cell sort for the render
  DirectGpu direct;
  LookupMapGpu lookup_map;
  AttractionPlan attraction_plan;
  AttractionGpu attraction;
  float* ink = nullptr;
  float* old_ink = nullptr;
  float* field_x = nullptr;
  float* field_y = nullptr;
  double* row_sums = nullptr;
  float2* pos = nullptr;
  float2* sorted = nullptr;
  float2* force = nullptr;
  // hold_distance: where each dot is drawn, in pos's order, and its copy
  // through a sort (the particles' permutation, FastsumGpu::sort_origin).
  float2* drawn = nullptr;
  float2* drawn_sorted = nullptr;
  // Warm births: the inclusive prefix sums of the ink's growth per pixel.
  double* growth_cdf = nullptr;
  void* scan_temp = nullptr;
  size_t scan_bytes = 0;
  uint8_t* keep = nullptr;
  int* kept = nullptr;
  FrameNumbers* numbers = nullptr;
  void* select_temp = nullptr;
  size_t select_bytes = 0;
  // Pinned host copies: the last frame's numbers (counters) and dots (points_out).
  FrameNumbers* numbers_host = nullptr;
  float2* points_host = nullptr;
  int points_capacity = 0;
  PointsSink sink;
  PointsJob jobs[kPointsRing];
  int next_job = 0;
  double* moved_partials = nullptr;  // per move block: the squared moves of its dots
  // A warm frame's iterations as one graph: the same ~20 launches per
  // iteration on the same buffers every frame (no shaking: nothing else
  // changes), so their launch gaps go. They are the body of a device-side
  // while loop, so a frame stops on convergence without the host waiting.
  // Made at the first warm frame.
  cudaGraphExec_t warm_iterations = nullptr;
  cudaStream_t capture_stream = nullptr;  // graphs are recorded here: any stream can launch them
  void drop_graph() {
    if (warm_iterations) cudaGraphExecDestroy(warm_iterations);
    warm_iterations = nullptr;
  }
};

namespace {

constexpr int kThreads = 256;

__global__ void ink_rows(RgbaView in, InkScale scale, float* ink, double* row_sums) {
  __shared__ double partial[kThreads];
  const int y = blockIdx.x;
  const uint32_t* row = in.row32(y);
  double sum = 0;
  for (int x = threadIdx.x; x < in.width; x += kThreads) {
    const float v = pixel_ink(row[x], scale);
    ink[size_t(y) * in.width + x] = v;
    sum += v;
  }
  partial[threadIdx.x] = sum;
  __syncthreads();
  for (int s = kThreads / 2; s > 0; s >>= 1) {
    if (threadIdx.x < s) partial[threadIdx.x] += partial[threadIdx.x + s];
    __syncthreads();
  }
  if (threadIdx.x == 0) row_sums[y] = partial[0];
}

__global__ void decide_frame(const double* row_sums, int rows, CountRule rule, const int* kept, int most_iterations,
                             FrameNumbers* out) {
  double sum = 0;
  for (int y = 0; y < rows; ++y) sum += row_sums[y];
  FrameNumbers f = frame_numbers(rule, sum, kept ? *kept : 0, *out);
  f.keep_iterating = keep_iterating(0, most_iterations, 0.0, f.count, f.spacing, 0.f);
  *out = f;
}

// After each warm iteration: sums the move blocks' partials in block order
// (the same total every run) and decides whether another iteration runs.
// Inside the while graph it sets the loop's condition.
__global__ void decide_iterating(const double* moved_partials, int blocks, int most, float tolerance,
                                 FrameNumbers* f, cudaGraphConditionalHandle loop, bool in_graph) {
  if (f->active == 0) return;  // stopped earlier in this graph body
  using Reduce = cub::BlockReduce<double, kThreads>;
  __shared__ typename Reduce::TempStorage temp;
  double sum = 0;
  for (int b = threadIdx.x; b < blocks; b += kThreads) sum += moved_partials[b];
  sum = Reduce(temp).Sum(sum);
  if (threadIdx.x != 0) return;
  const int done = ++f->iterations;
  const bool again = keep_iterating(done, most, sum, f->count, f->spacing, tolerance);
  f->keep_iterating = again;
  if (!again) {
    f->active = 0;  // the rest of a graph body's iterations move nothing
    ++f->warm_frames;
    f->warm_iterations += done;
  }
  if (in_graph) cudaGraphSetConditional(loop, again);
}

// The while loop's first test: a frame with no dots, or no iterations, skips it.
__global__ void open_loop(const FrameNumbers* f, cudaGraphConditionalHandle loop) {
  cudaGraphSetConditional(loop, f->keep_iterating);
}

__global__ void mark_survivors(const float2* pos, const FrameNumbers* previous, int capacity, const float* ink,
                               const float* old_ink, int w, int h, uint64_t seed, uint8_t* keep) {
  const int m = previous->count;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < capacity; i += gridDim.x * blockDim.x)
    keep[i] = i < m && keep_particle(pos[i], ink, old_ink, w, h, seed, uint32_t(i));
}

// The scan reads the growth straight from the two ink planes.
struct GrowthAt {
  const float* ink;
  const float* old_ink;
  __host__ __device__ double operator()(size_t i) const { return ink_growth(ink, old_ink, i); }
};
auto growth_of(const float* ink, const float* old_ink) {
  return thrust::make_transform_iterator(thrust::counting_iterator<size_t>(0), GrowthAt{ink, old_ink});
}

// growth_cdf: warm frames (births where the ink grew, while it grew at all).
__global__ void births(const FrameNumbers* f, const float* ink, const double* growth_cdf, int w, int h, uint64_t seed,
                       float2* pos, float2* drawn) {
  const int lo = f->kept, hi = f->count;
  const bool by_growth = growth_cdf && growth_cdf[size_t(w) * h - 1] > 0;
  for (int i = lo + blockIdx.x * blockDim.x + threadIdx.x; i < hi; i += gridDim.x * blockDim.x) {
    pos[i] = by_growth ? sample_by_growth(growth_cdf, w, h, seed, uint32_t(i))
                       : sample_particle(ink, w, h, seed, kStreamInit, uint32_t(i));
    if (drawn) drawn[i] = pos[i];
  }
}

// The survivors (compacted into `survivors`) back into pos, the surplus
// spread out (surplus_dropped); drawn likewise where dots are held.
__global__ void close_up_survivors(const float2* survivors, const float2* drawn_survivors, const int* kept,
                                   const FrameNumbers* f, float2* pos, float2* drawn) {
  const int m = *kept, count = f->count;
  for (int j = blockIdx.x * blockDim.x + threadIdx.x; j < m; j += gridDim.x * blockDim.x) {
    if (surplus_dropped(j, m, count)) continue;
    const int slot = survivor_slot(j, m, count);
    pos[slot] = survivors[j];
    if (drawn) drawn[slot] = drawn_survivors[j];
  }
}

// drawn_sorted[slot] = drawn[origin[slot]]: the drawn places follow a sort.
__global__ void carry_drawn(const int* origin, const int* count, const float2* drawn, float2* drawn_sorted) {
  const int m = *count;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < m; i += gridDim.x * blockDim.x)
    drawn_sorted[i] = drawn[origin[i]];
}

// After a sort: the carried places back; at a frame's end (settle) each
// held or moved to its particle (pos, sorted by then).
__global__ void settle_drawn(const float2* pos, const float2* drawn_sorted, const int* count, bool settle, float hold,
                             float2* drawn) {
  const int m = *count;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < m; i += gridDim.x * blockDim.x)
    drawn[i] = settle ? drawn_position(pos[i], drawn_sorted[i], hold) : drawn_sorted[i];
}

// moved_partials (warm frames): each block's sum of its dots' squared moves.
__global__ void move(const float2* sorted, const float2* force, const int* count, const FrameNumbers* f,
                     const float* field_x, const float* field_y, int w, int h, float shake_factor, uint64_t seed,
                     uint32_t iteration, float2* pos, double* moved_partials) {
  const int m = *count;
  const float step = f->step_px, spacing = f->spacing;
  double moved = 0;
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < m; i += gridDim.x * blockDim.x) {
    // sorted may be pos (a lagged iteration moves the dots in place).
    const float2 from = sorted[i];
    float2 a;
    sample_field(field_x, field_y, w, h, from.x, from.y, a.x, a.y);
    const float2 to =
        move_particle(from, force[i], a, step, spacing, shake_factor * spacing, seed, uint32_t(i), iteration, w, h);
    pos[i] = to;
    moved += squared_move(from, to);
  }
  if (!moved_partials) return;
  using Reduce = cub::BlockReduce<double, kThreads>;
  __shared__ typename Reduce::TempStorage temp;
  moved = Reduce(temp).Sum(moved);
  if (threadIdx.x == 0) moved_partials[blockIdx.x] = moved;
}

__global__ void render(RgbaView out, const float2* pos, CellGrid cells, RenderParams r) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
  if (x >= out.width) return;
  out.row32(y)[x] = render_pixel(x, y, pos, cells, r);
}

__global__ void render_handover(RgbaView out, const float2* own, CellGrid own_cells, const float2* next,
                                CellGrid next_cells, RenderParams r, HandoverField field) {
  const int x = blockIdx.x * blockDim.x + threadIdx.x, y = blockIdx.y;
  if (x >= out.width) return;
  out.row32(y)[x] = render_handover_pixel(x, y, own, own_cells, next, next_cells, r, field);
}

// SP_HALFTONE_GRAPHS=0 (a benchmark switch; the same work either way) runs
// warm frames launch by launch, to measure what the graph saves.
bool warm_iterations_as_graph() {
  static const bool on = [] {
    const char* v = std::getenv("SP_HALFTONE_GRAPHS");
    return !(v && std::string(v) == "0");
  }();
  return on;
}

// A graph that runs `enqueue_body` while its condition holds: open_loop sets
// the first test from the frame's numbers, the body's last kernel each next
// one. The body is recorded on `capture_stream` (thread-local capture: other
// threads' CUDA calls are not affected); nothing runs here.
template <class EnqueueBody>
cudaGraphExec_t while_graph(cudaStream_t capture_stream, const FrameNumbers* numbers, EnqueueBody enqueue_body) {
  cudaGraph_t graph = nullptr;
  SP_CUDA_CHECK(cudaGraphCreate(&graph, 0));
  struct Owner {
    cudaGraph_t g;
    ~Owner() { cudaGraphDestroy(g); }
  } owner{graph};
  cudaGraphConditionalHandle loop = 0;
  SP_CUDA_CHECK(cudaGraphConditionalHandleCreate(&loop, graph, 0, cudaGraphCondAssignDefault));
  // The first test, recorded as a node of the outer graph.
  SP_CUDA_CHECK(cudaStreamBeginCaptureToGraph(capture_stream, graph, nullptr, nullptr, 0,
                                              cudaStreamCaptureModeThreadLocal));
  open_loop<<<1, 1, 0, capture_stream>>>(numbers, loop);
  const cudaError_t launched = cudaGetLastError();
  cudaGraph_t captured = nullptr;
  SP_CUDA_CHECK(cudaStreamEndCapture(capture_stream, &captured));
  SP_CUDA_CHECK(launched);
  size_t roots = 1;
  cudaGraphNode_t first = nullptr;
  SP_CUDA_CHECK(cudaGraphGetRootNodes(graph, &first, &roots));
  cudaGraphNodeParams params{};
  params.type = cudaGraphNodeTypeConditional;
  params.conditional.handle = loop;
  params.conditional.type = cudaGraphCondTypeWhile;
  params.conditional.size = 1;
  cudaGraphNode_t while_node = nullptr;
  SP_CUDA_CHECK(cudaGraphAddNode(&while_node, graph, &first, nullptr, 1, &params));
  cudaGraph_t body = params.conditional.phGraph_out[0];
  SP_CUDA_CHECK(cudaStreamBeginCaptureToGraph(capture_stream, body, nullptr, nullptr, 0,
                                              cudaStreamCaptureModeThreadLocal));
  try {
    enqueue_body(capture_stream, loop);
  } catch (...) {
    cudaStreamEndCapture(capture_stream, &captured);
    throw;
  }
  SP_CUDA_CHECK(cudaStreamEndCapture(capture_stream, &captured));
  cudaGraphExec_t exec = nullptr;
  SP_CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
  return exec;
}

void CUDART_CB write_points_callback(void* data) {
  const PointsJob& j = *static_cast<const PointsJob*>(data);
  const PointsSink& s = *j.sink;
  try {
    write_points(s.pattern, j.frame, s.pos, s.numbers->count, s.size, s.radius, s.background, s.dot);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "halftone: %s\n", e.what());  // a callback cannot throw into the stream
  }
}

}  // namespace

void HalftoneStage::release_cuda() {
  if (!cuda_) return;
  cudaDeviceSynchronize();  // queued points_out callbacks read the sink and the pinned buffers
  Profile& pr = cuda_->profile;
  if (pr.on()) {
    pr.collect(*cuda_->numbers_host);
    if (pr.frames > 0) {
      std::fprintf(stderr, "halftone profile: %d dots, %d frames, ms per frame: iteration %.4f", pr.dots, pr.frames,
                   pr.iteration_ms / pr.frames);
      for (int i = 1; i < kMarks; ++i)
        if (kMarkNames[i][0]) std::fprintf(stderr, ", %s %.4f", kMarkNames[i], pr.ms[i] / pr.frames);
      std::fprintf(stderr, " (sort..move: first iteration)\n");
    }
    for (auto& set : pr.event)
      for (cudaEvent_t e : set) cudaEventDestroy(e);
  }
  cuda_->drop_graph();
  cudaStreamDestroy(cuda_->capture_stream);
  cudaFreeHost(cuda_->profile.copied);
  cudaFreeHost(cuda_->numbers_host);
  cudaFreeHost(cuda_->points_host);
  delete cuda_;
  cuda_ = nullptr;
}

void HalftoneStage::configure_cuda(ScratchAllocator& scratch) {
  if (cuda_ && cuda_->points_capacity < (settings_.points_out.empty() ? 0 : capacity_)) {
    cudaFreeHost(cuda_->points_host);
    cuda_->points_host = nullptr;
  }
  if (!cuda_) {
    cuda_ = new Cuda();
    SP_CUDA_CHECK(cudaMallocHost(&cuda_->numbers_host, sizeof(FrameNumbers)));
    SP_CUDA_CHECK(cudaStreamCreateWithFlags(&cuda_->capture_stream, cudaStreamNonBlocking));
    if (settings_.profile) {
      SP_CUDA_CHECK(cudaMallocHost(&cuda_->profile.copied, sizeof(int) * Profile::kSets));
      for (auto& set : cuda_->profile.event)
        for (cudaEvent_t& e : set) SP_CUDA_CHECK(cudaEventCreate(&e));
    }
  }
  Cuda& c = *cuda_;
  c.drop_graph();  // the buffers it names are about to move
  *c.numbers_host = FrameNumbers{};
  if (!settings_.points_out.empty() && !c.points_host) {
    SP_CUDA_CHECK(cudaMallocHost(&c.points_host, sizeof(float2) * capacity_));
    c.points_capacity = capacity_;
  }
  c.sink = {settings_.points_out, size_, dot_radius_, settings_.background, settings_.dot_color, c.numbers_host,
            c.points_host};
  using Clock = std::chrono::steady_clock;
  const auto ms_since = [](Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); };
  auto step = Clock::now();
  c.fastsum.configure(plan_, capacity_, scratch, needs_exact_sums());
  configure_ms_[0] = ms_since(step);
  if (settings_.direct) c.direct.configure(capacity_, scratch);
  if (settings_.lookup_map) c.lookup_map.configure(size_.width, size_.height, capacity_, map_slot_px_, scratch);
  c.attraction_plan = make_attraction_plan(size_.width, size_.height);
  step = Clock::now();
  c.attraction.configure(c.attraction_plan, scratch);
  configure_ms_[1] = ms_since(step);
  step = Clock::now();
  const size_t pixels = size_t(size_.width) * size_.height;
  c.ink = scratch.allocate_array<float>(pixels);
  c.old_ink = scratch.allocate_array<float>(pixels);
  c.field_x = scratch.allocate_array<float>(pixels);
  c.field_y = scratch.allocate_array<float>(pixels);
  c.row_sums = scratch.allocate_array<double>(size_.height);
  c.pos = scratch.allocate_array<float2>(capacity_);
  c.sorted = scratch.allocate_array<float2>(capacity_);
  c.force = scratch.allocate_array<float2>(capacity_);
  c.keep = scratch.allocate_array<uint8_t>(capacity_);
  c.drawn = holds_dots() ? scratch.allocate_array<float2>(capacity_) : nullptr;
  c.drawn_sorted = holds_dots() ? scratch.allocate_array<float2>(capacity_) : nullptr;
  c.growth_cdf = scratch.allocate_array<double>(pixels);
  c.scan_bytes = 0;
  SP_CUDA_CHECK(cub::DeviceScan::InclusiveSum(nullptr, c.scan_bytes, growth_of(c.ink, c.old_ink), c.growth_cdf, pixels));
  c.scan_temp = scratch.allocate(std::max<size_t>(c.scan_bytes, 16));
  c.moved_partials = scratch.allocate_array<double>(c.fastsum.particle_blocks());
  c.kept = scratch.allocate_array<int>(1);
  c.numbers = scratch.allocate_array<FrameNumbers>(1);
  SP_CUDA_CHECK(cudaMemset(c.numbers, 0, sizeof(FrameNumbers)));
  c.select_bytes = 0;
  SP_CUDA_CHECK(cub::DeviceSelect::Flagged(nullptr, c.select_bytes, c.pos, c.keep, c.sorted, c.kept, capacity_));
  c.select_temp = scratch.allocate(std::max<size_t>(c.select_bytes, 16));
  configure_ms_[2] = ms_since(step);
}

namespace {

CellGrid cell_grid(const FastsumGpu& fastsum, float stray) {
  const DevicePlan& p = fastsum.device_plan();
  return {fastsum.cell_start(), p.cells_x, p.cells_y, p.cell_w, p.cell_h, stray};
}

}  // namespace

void HalftoneStage::process_cuda(const RgbaView& in, const RgbaView& out, const FrameInfo& frame, cudaStream_t stream) {
  const SeamStep step = seam_step(frame.time_seconds);
  if (step.before_own_state) {  // its output is discarded: the cheapest picture will do
    SP_CUDA_CHECK(cudaMemcpy2DAsync(out.data, out.pitch, in.data, in.pitch, size_t(size_.width) * 4, size_.height,
                                    cudaMemcpyDeviceToDevice, stream));
    return;
  }
  // A handover runs launch by launch: with the two states' kernels on one
  // stream, a warm graph hit illegal addresses under memcheck (docs/perf.md).
  if (step.handing_over) next_->advance_cuda(in, stream, false, true);
  // A deterministic state sums exactly on every frame, so its warm graph
  // (captured so) serves the frames before a seam too.
  const bool exact = step.exact || settings_.deterministic;
  advance_cuda(in, stream, !step.handing_over && (!step.exact || settings_.deterministic), exact);
  Cuda& c = *cuda_;
  Profile& pr = c.profile;
  const dim3 grid((size_.width + kThreads - 1) / kThreads, size_.height);
  const RenderParams rp = render_params(settings_, dot_radius_);
  const float stray = float(settings_.hold_distance);
  const auto dots = [&](const Cuda& of) { return holds_dots() ? of.drawn : of.pos; };
  if (step.handing_over) {
    const Cuda& next = *next_->cuda_;
    render_handover<<<grid, kThreads, 0, stream>>>(out, dots(c), cell_grid(c.fastsum, stray), dots(next),
                                                   cell_grid(next.fastsum, stray), rp, handover_field(step.threshold));
  } else {
    render<<<grid, kThreads, 0, stream>>>(out, dots(c), cell_grid(c.fastsum, stray), rp);
  }
  SP_CUDA_CHECK_LAUNCH();
  pr.record(kEnd, stream);
  pr.end_frame(frames_done_ > 1 ? -1 : settings_.iterations);
  if (!settings_.points_out.empty()) {
    SP_CUDA_CHECK(
        cudaMemcpyAsync(c.points_host, dots(c), sizeof(float2) * capacity_, cudaMemcpyDeviceToHost, stream));
    PointsJob& job = c.jobs[c.next_job];
    c.next_job = (c.next_job + 1) % kPointsRing;
    job = {&c.sink, frame.index};
    SP_CUDA_CHECK(cudaLaunchHostFunc(stream, write_points_callback, &job));
  }
}

void HalftoneStage::advance_cuda(const RgbaView& in, cudaStream_t stream, bool warm_graph, bool exact) {
  Cuda& c = *cuda_;
  c.fastsum.use_exact_sums(exact);
  const int w = size_.width, h = size_.height;
  const int blocks = c.fastsum.particle_blocks();
  Profile& pr = c.profile;
  pr.collect(*c.numbers_host);
  pr.begin_frame();
  pr.record(kStart, stream);
  ink_rows<<<h, kThreads, 0, stream>>>(in, stage_ink_scale(settings_), c.ink, c.row_sums);
  SP_CUDA_CHECK_LAUNCH();
  const uint64_t seed = frame_seed(settings_.seed, frames_done_);
  const bool warm = frames_done_ > 0;
  if (warm) {
    mark_survivors<<<blocks, kThreads, 0, stream>>>(c.pos, c.numbers, capacity_, c.ink, c.old_ink, w, h, seed, c.keep);
    SP_CUDA_CHECK_LAUNCH();
    SP_CUDA_CHECK(cub::DeviceSelect::Flagged(c.select_temp, c.select_bytes, c.pos, c.keep, c.sorted, c.kept, capacity_,
                                             stream));
    if (c.drawn)
      SP_CUDA_CHECK(cub::DeviceSelect::Flagged(c.select_temp, c.select_bytes, c.drawn, c.keep, c.drawn_sorted, c.kept,
                                               capacity_, stream));
    const size_t pixels = size_t(w) * h;
    SP_CUDA_CHECK(cub::DeviceScan::InclusiveSum(c.scan_temp, c.scan_bytes, growth_of(c.ink, c.old_ink), c.growth_cdf,
                                                pixels, stream));
  }
  decide_frame<<<1, 1, 0, stream>>>(c.row_sums, h, count_rule(settings_, capacity_), warm ? c.kept : nullptr,
                                    warm ? settings_.video_iterations : settings_.iterations, c.numbers);
  SP_CUDA_CHECK_LAUNCH();
  if (warm) {
    close_up_survivors<<<blocks, kThreads, 0, stream>>>(c.sorted, c.drawn_sorted, c.kept, c.numbers, c.pos, c.drawn);
    SP_CUDA_CHECK_LAUNCH();
  }
  births<<<blocks, kThreads, 0, stream>>>(c.numbers, c.ink, warm ? c.growth_cdf : nullptr, w, h, seed, c.pos, c.drawn);
  SP_CUDA_CHECK_LAUNCH();
  pr.record(kSetup, stream);
  c.attraction.compute(c.ink, c.numbers, c.field_x, c.field_y, stream);
  pr.record(kAttraction, stream);
  const int* count = &c.numbers->count;
  const int* active = &c.numbers->active;
  const int most = warm ? settings_.video_iterations : settings_.iterations;
  const bool as_graph = warm && most > 0 && warm_graph && warm_iterations_as_graph();
  // Launched one by one, the host cannot see convergence: every frame runs `most`.
  const float tolerance = as_graph ? float(settings_.video_tolerance) : 0.f;
  const auto iterate = [&](int k, cudaStream_t s, cudaGraphConditionalHandle loop, bool in_graph) {
    const bool timed = k == 0 && pr.on();
    const bool lagged = lagged_iteration(warm, k);
    // A lagged iteration moves the dots in place, in the last sort's order.
    float2* at = lagged ? c.pos : c.sorted;
    if (!lagged) {
      c.fastsum.sort(c.pos, c.sorted, active, s);
      carry_drawn_through_sort(active, false, s);
    }
    if (timed) pr.record(kSort, s);
    if (settings_.direct) {
      // The profile books the whole direct sum as the near field.
      if (timed)
        for (Mark m : {kSpread, kFft, kInterpolate}) pr.record(m, s);
      c.direct.forces(c.sorted, active, c.force, s);
    } else {
      if (lagged)
        c.fastsum.far_field_of_last_spread(at, active, c.force, s);
      else
        c.fastsum.far_field(c.sorted, active, c.force, s, timed ? pr.at(kSpread) : nullptr,
                            timed ? pr.at(kFft) : nullptr);
      if (timed) pr.record(kInterpolate, s);
      if (settings_.lookup_map)
        c.lookup_map.add_near_field(at, active, plan_.near, c.force, s);
      else
        c.fastsum.add_near_field(at, active, c.force, s);
    }
    if (timed) pr.record(kNear, s);
    // shake_amplitude is linear in the spacing, which lives on the device.
    const float shake = warm ? 0.f : shake_amplitude(settings_, k, 1.f);
    move<<<blocks, kThreads, 0, s>>>(at, c.force, active, c.numbers, c.field_x, c.field_y, w, h, shake, seed,
                                     uint32_t(k), c.pos, warm ? c.moved_partials : nullptr);
    SP_CUDA_CHECK_LAUNCH();
    if (timed) pr.record(kMove, s);
    if (warm) {
      decide_iterating<<<1, kThreads, 0, s>>>(c.moved_partials, blocks, most, tolerance, c.numbers, loop, in_graph);
      SP_CUDA_CHECK_LAUNCH();
    }
  };
  // Warm frames run as the while graph, which tests on the device whether
  // another iteration is due. Its body is one cycle of far_field_every
  // iterations (the first spreads): a frame that stops inside a cycle moves
  // no dot in the cycle's rest (the active count is 0 then). With a profile,
  // the first cycle runs launch by launch (events cannot be in the graph).
  // SP_HALFTONE_GRAPHS=0 (a benchmark switch) launches every iteration.
  const int cycle = std::max(1, std::min(settings_.far_field_every, most));
  int first_in_graph = 0;
  if (pr.on() || !as_graph) {
    first_in_graph = as_graph ? cycle : most;
    for (int k = 0; k < first_in_graph; ++k) iterate(k, stream, 0, false);
  }
  if (as_graph) {
    if (!c.warm_iterations)
      c.warm_iterations = while_graph(c.capture_stream, c.numbers, [&](cudaStream_t s, cudaGraphConditionalHandle loop) {
        for (int k = first_in_graph; k < first_in_graph + cycle; ++k) iterate(k, s, loop, true);
      });
    SP_CUDA_CHECK(cudaGraphLaunch(c.warm_iterations, stream));
  }
  if (most == 0)
    for (Mark m : {kSort, kSpread, kFft, kInterpolate, kNear, kMove}) pr.record(m, stream);
  if (warm) pr.copy_iterations(&c.numbers->iterations, stream);
  pr.record(kIterated, stream);
  c.fastsum.sort(c.pos, c.sorted, count, stream);
  SP_CUDA_CHECK(cudaMemcpyAsync(c.pos, c.sorted, sizeof(float2) * capacity_, cudaMemcpyDeviceToDevice, stream));
  carry_drawn_through_sort(count, true, stream);
  std::swap(c.ink, c.old_ink);
  ++frames_done_;
  SP_CUDA_CHECK(cudaMemcpyAsync(c.numbers_host, c.numbers, sizeof(FrameNumbers), cudaMemcpyDeviceToHost, stream));
}

void HalftoneStage::carry_drawn_through_sort(const int* count, bool settle, cudaStream_t stream) {
  Cuda& c = *cuda_;
  if (!c.drawn) return;
  const int blocks = c.fastsum.particle_blocks();
  carry_drawn<<<blocks, kThreads, 0, stream>>>(c.fastsum.sort_origin(), count, c.drawn, c.drawn_sorted);
  SP_CUDA_CHECK_LAUNCH();
  // A cold frame draws every dot where its particle is (hold 0).
  const float hold = frames_done_ > 0 ? float(settings_.hold_distance) : 0.f;
  settle_drawn<<<blocks, kThreads, 0, stream>>>(c.pos, c.drawn_sorted, count, settle, hold, c.drawn);
  SP_CUDA_CHECK_LAUNCH();
}

std::vector<float2> HalftoneStage::particles_cuda() const {
  if (!cuda_) return {};
  SP_CUDA_CHECK(cudaDeviceSynchronize());
  std::vector<float2> out(cuda_->numbers_host->count);
  SP_CUDA_CHECK(cudaMemcpy(out.data(), cuda_->pos, sizeof(float2) * out.size(), cudaMemcpyDeviceToHost));
  return out;
}

void HalftoneStage::add_profile_counters(StageCounters& counters) const {
  if (!cuda_ || cuda_->profile.frames == 0) return;
  const Profile& pr = cuda_->profile;
  counters["ms_iteration"] = pr.iteration_ms / pr.frames;
  for (int i = 1; i < kMarks; ++i)
    if (kMarkNames[i][0]) counters[std::string("ms_") + kMarkNames[i]] = pr.ms[i] / pr.frames;
}

FrameNumbers HalftoneStage::numbers_cuda() const {
  if (!cuda_) return {};
  return *cuda_->numbers_host;  // the last frame whose copy-back completed
}

}  // namespace sp::halftone
