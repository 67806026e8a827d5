#pragma once
// lowpoly: flat-shaded Delaunay mesh over edge-weighted random vertices, on
// the CPU and on CUDA with identical results. See README.md.
#include <array>
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <vector>

#include "pipeline/cuda_handles.h"
#include "pipeline/stage.h"
#include "stages/lowpoly/lowpoly_delaunay.h"
#include "stages/lowpoly/lowpoly_math.h"
#include "stages/lowpoly/lowpoly_squares_mesh.h"
#include "stages/lowpoly/lowpoly_strips.h"
#include "stages/lowpoly/lowpoly_voronoi.h"

namespace sp::lowpoly {

enum class Fill { mean, centroid };
// How the Delaunay mesh is built (the result is the same exact triangulation):
// star = the CUDA backend's per-vertex star walks (the CPU backend: incremental
// insertion); squares = the route on both backends, 1+JFA+2 Voronoi
// labels -> 2x2-square triangles -> scan -> keep the certified ones -> repair.
enum class MeshRoute { star, squares };

struct LowpolySettings {
  int64_t points = 0;            // expected interior vertices; 0 = from points_per_mp
  double points_per_mp = 5000;   // per million pixels
  double edge_weight = 8.0;      // selection weight 1 + edge_weight * edge / 255
  int64_t seed = 1;
  int border_spacing = 0;        // pixels between border vertices; 0 = the mean vertex spacing
  Fill fill = Fill::mean;
  double line_width = 0.0;       // pixels; 0 = no lines
  std::array<int, 4> line_color = {0, 0, 0, 255};
  bool temporal = false;         // keep vertices where the edge map did not change
  double temporal_threshold = 4.0;  // mean |edge change| per pixel of a tile (0..255) that re-samples it
  double refresh_seconds = 2.0;  // temporal: each tile also re-samples once per this period (0 = never)
  double color_smoothing = 0.0;  // EMA factor of the output colour over time
  bool voronoi_check = false;    // diagnostic: also build the seed's JFA + 2x2-square triangles and compare
  MeshRoute mesh = MeshRoute::star;
};

constexpr int kTile = 32;  // temporal re-sampling granularity, pixels

StageDescriptor make_lowpoly_descriptor();
LowpolySettings lowpoly_settings_from(const Params& p);

// What configure() derives from the settings and the frame size.
struct FramePlan {
  int width = 0, height = 0;
  int64_t expected_points = 0;      // interior
  int capacity = 0;                 // interior points kept at most (8 sigma above the expectation)
  std::vector<uint32_t> border;     // packed border vertices, corners included
  int mean_spacing = 2;             // pixels between vertices on average
  uint32_t edge_weight_q16 = 0;
  uint64_t seed = 0;
  int tiles_x = 0, tiles_y = 0;
  uint64_t tile_threshold_q8 = 0;   // threshold * 256 * pixels of a full tile
  int line_q4 = 0;                  // line width in quarter pixels
  uint32_t line_color = 0;
  uint32_t smoothing_q8 = 0;
  size_t max_triangles() const { return 2 * (size_t(capacity) + border.size()); }
};
FramePlan make_plan(const LowpolySettings& s, Size size);

// Host half shared by both backends: border + selected interior pixels ->
// unique Delaunay triangles. Reuses the previous mesh when the points did not change.
class MeshBuilder {
 public:
  // Build by the squares route (else incremental/strips). Its failure (never
  // seen) falls back to the incremental triangulation: same mesh, counted.
  void use_squares(bool on) { squares_on_ = on; }
  // Test hook: every squares build counts as failed (exercises the fallback).
  void force_squares_failure_for_testing(bool on) { force_squares_failure_ = on; }
  // `selected` holds pixel indices (y * W + x) in raster order.
  void build(const FramePlan& plan, const int32_t* selected, int count);
  const std::vector<Triangle>& triangles() const { return triangles_; }
  int point_count() const { return int(points_.size()); }
  int dropped() const { return dropped_; }
  bool reused() const { return reused_; }
  // The strip-parallel triangulation could not prove its result complete and
  // the sequential one ran instead (same mesh).
  bool fell_back() const { return fell_back_; }
  int strip_retries() const { return strips_.retries(); }
  double build_ms() const { return build_ms_; }
  // Squares route: the last build's repair statistics and fallbacks so far.
  const RepairStats& repair_stats() const { return squares_.stats(); }
  int64_t squares_fallbacks() const { return squares_fallbacks_; }
  void reset() { points_.clear(), previous_.clear(), triangles_.clear(), squares_fallbacks_ = 0; }

 private:
  std::vector<uint32_t> points_, previous_;
  std::vector<Triangle> triangles_;
  Delaunay delaunay_;
  StripDelaunay strips_;
  SquaresMesh squares_;
  bool squares_on_ = false, force_squares_failure_ = false;
  int64_t squares_fallbacks_ = 0;
  int dropped_ = 0;
  bool reused_ = false, fell_back_ = false;
  double build_ms_ = 0;
};

// The repair_* counters of the squares route (both backends).
void add_repair_counters(const RepairStats& r, StageCounters& c);

class LowpolyStage final : public Stage {
 public:
  explicit LowpolyStage(LowpolySettings s);
  ~LowpolyStage() override;
  Size configure(Size input, Backend backend, ScratchAllocator& scratch) override;
  void process_cpu(const RgbaView& in, const RgbaView& out, const FrameInfo& frame) override;
#if STYLEPIPE_HAS_CUDA
  void process_cuda(const RgbaView& in, const RgbaView& out, const FrameInfo& frame, cudaStream_t stream) override;
#endif
  bool is_temporal() const override { return settings_.temporal || settings_.color_smoothing > 0; }
  // The colour EMA forgets its start. Kept vertices would not (a tile keeps
  // them until its edges change), but each tile also re-samples once per
  // refresh_seconds, at a time of its own.
  int warmup_frames() const override { return ema_warmup_frames(settings_.color_smoothing); }
  // A tile's vertices depend only on the last refresh period's frames
  // (tile_refresh_due): a warm-up of one period rebuilds them exactly.
  double warmup_seconds() const override { return settings_.temporal ? settings_.refresh_seconds : 0.0; }
  std::string state_lost_at_seams() const override {
    return settings_.temporal && !(settings_.refresh_seconds > 0) ? "the kept vertices (temporal: true, refresh_seconds: 0)"
                                                                   : std::string();
  }
  double floor_bytes(Size in, Size out) const override;
  std::optional<GpuCost> gpu_cost(Size in) const override;
  StageCounters counters() const override;

  // The last frame's mesh (CPU: the host's; CUDA: a copy of the device's, after the stream synchronized).
  const std::vector<Triangle>& mesh() const;
  // CUDA: frames whose device mesh was not certified and came from the host instead;
  // CPU with mesh: squares: frames whose squares route failed (the incremental one ran).
  int64_t mesh_fallbacks() const;
  // voronoi_check: the last frame's JFA labels ((W+1) x (H+1) indices into the border ring +
  // interior vertex array) and square statistics (CUDA: copied from the device, stream synchronized).
  std::vector<int32_t> voronoi_labels() const;
  SquareStats square_stats() const;
  // Test hook: every device mesh counts as uncertified, and on the CPU every squares
  // route as failed (exercises the fallbacks; before configure()).
  void force_mesh_fallback_for_testing(bool on) { force_fallback_ = on; }
  // Test hook: build the device mesh with one thread per vertex (not the automatic choice; before configure()).
  // 0: the size-dependent choice; 1: one thread per vertex; 4..32: lanes per vertex.
  void set_mesh_lanes_for_testing(int lanes) { lanes_per_vertex_ = lanes; }
  const FramePlan& plan() const { return plan_; }

  struct CpuState;
  struct CudaState;

 private:
  void configure_cuda(ScratchAllocator& scratch);
  // Mean or centroid colours and painting (and smoothing) of the mesh, gated by
  // whether the device mesh or the host's replaced it (lowpoly_cuda.cu).
  void shade_cuda(const RgbaView& in, const RgbaView& out, bool host_mesh, cudaStream_t stream);
  void release_cuda();
  void cpu_points(const RgbaView& in, double time);
  void cpu_shade(const RgbaView& in, const RgbaView& out);

  LowpolySettings settings_;
  FramePlan plan_;
  Backend backend_ = Backend::cpu;
  MeshBuilder mesh_;
  bool have_history_ = false;
  double last_time_ = 0.0;  // the previous frame's time (temporal refresh)
  bool force_fallback_ = false;
  int lanes_per_vertex_ = 0;
  StageCounters cpu_counters_;
  std::vector<int32_t> cpu_labels_;
  SquareStats cpu_square_stats_;
  void cpu_voronoi_check(const int32_t* selected, int count);
  std::unique_ptr<CpuState> cpu_;
  CudaState* cuda_ = nullptr;  // owned; defined in lowpoly_cuda.cu
};

}  // namespace sp::lowpoly
