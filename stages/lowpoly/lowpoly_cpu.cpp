// CPU backend of the lowpoly stage: the same integer arithmetic as the CUDA
// kernels (lowpoly_math.h), rows or triangles spread over parallel_for.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstring>

#include "pipeline/errors.h"
#include "pipeline/parallel.h"
#include "stages/lowpoly/lowpoly.h"
#include "stages/lowpoly/lowpoly_star_mesh.h"

namespace sp::lowpoly {

struct LowpolyStage::CpuState {
  uint8_t* luma = nullptr;
  uint8_t* edge = nullptr;
  uint8_t* flags = nullptr;         // selected interior pixels (kept between frames in temporal mode)
  uint64_t* row_weights = nullptr;  // per-row weight sums
  uint32_t* tile_ref = nullptr;     // temporal: tile edge sum at its last re-sample
  uint8_t* tile_changed = nullptr;
  int32_t* selected = nullptr;      // pixel indices, raster order
  uint32_t* colors = nullptr;       // per triangle
  uint16_t* smooth = nullptr;       // colour EMA state, 4 per pixel
};

namespace {
using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }
}  // namespace

LowpolyStage::LowpolyStage(LowpolySettings s) : settings_(s) {}
LowpolyStage::~LowpolyStage() { release_cuda(); }

Size LowpolyStage::configure(Size input, Backend backend, ScratchAllocator& scratch) {
  plan_ = make_plan(settings_, input);
  backend_ = backend;
  have_history_ = false;
  mesh_.reset();
  // The CUDA backend's host fallback stays incremental (an independent construction).
  mesh_.use_squares(backend == Backend::cpu && settings_.mesh == MeshRoute::squares);
  mesh_.force_squares_failure_for_testing(force_fallback_);
  const size_t pixels = size_t(input.width) * input.height;
  if (backend == Backend::cpu) {
    release_cuda();
    cpu_ = std::make_unique<CpuState>();
    CpuState& c = *cpu_;
    c.luma = scratch.allocate_array<uint8_t>(pixels);
    c.edge = scratch.allocate_array<uint8_t>(pixels);
    c.flags = scratch.allocate_array<uint8_t>(pixels);
    c.row_weights = scratch.allocate_array<uint64_t>(size_t(input.height));
    c.tile_ref = scratch.allocate_array<uint32_t>(size_t(plan_.tiles_x) * plan_.tiles_y);
    c.tile_changed = scratch.allocate_array<uint8_t>(size_t(plan_.tiles_x) * plan_.tiles_y);
    c.selected = scratch.allocate_array<int32_t>(pixels);
    c.colors = scratch.allocate_array<uint32_t>(plan_.max_triangles());
    if (plan_.smoothing_q8 > 0) c.smooth = scratch.allocate_array<uint16_t>(4 * pixels);
    std::memset(c.flags, 0, pixels);
  } else {
    cpu_.reset();
    configure_cuda(scratch);
  }
  return input;
}

// Edges, then the selection flags (temporal: only in changed tiles), then the
// selected pixel indices in raster order.
void LowpolyStage::cpu_points(const RgbaView& in, double time) {
  CpuState& c = *cpu_;
  const int w = plan_.width, h = plan_.height;
  parallel_for(h, [&](int y0, int y1) {
    for (int y = y0; y < y1; ++y)
      for (int x = 0; x < w; ++x) c.luma[size_t(y) * w + x] = uint8_t(luma_of(in.row32(y)[x]));
  }, 8);
  parallel_for(h, [&](int y0, int y1) {
    for (int y = y0; y < y1; ++y) {
      uint64_t sum = 0;
      for (int x = 0; x < w; ++x) {
        const int e = sobel_edge(c.luma, w, h, x, y);
        c.edge[size_t(y) * w + x] = uint8_t(e);
        if (x > 0 && y > 0) sum += point_weight(e, plan_.edge_weight_q16);
      }
      c.row_weights[y] = sum;
    }
  }, 8);
  uint64_t weight_sum = 0;
  for (int y = 0; y < h; ++y) weight_sum += c.row_weights[y];
  const uint64_t scale = selection_scale(plan_.expected_points, weight_sum);
  const bool keep = settings_.temporal && have_history_;
  if (keep) {
    parallel_for(plan_.tiles_y, [&](int t0, int t1) {
      for (int ty = t0; ty < t1; ++ty)
        for (int tx = 0; tx < plan_.tiles_x; ++tx) {
          const int x0 = tx * kTile, y0 = ty * kTile, x1 = std::min(w, x0 + kTile), y1 = std::min(h, y0 + kTile);
          uint32_t sum = 0;
          for (int y = y0; y < y1; ++y)
            for (int x = x0; x < x1; ++x) sum += c.edge[size_t(y) * w + x];
          const size_t tile = size_t(ty) * plan_.tiles_x + tx;
          c.tile_changed[tile] = tile_changed(sum, c.tile_ref[tile], uint32_t((x1 - x0) * (y1 - y0)),
                                              plan_.tile_threshold_q8) ||
                                 tile_refresh_due(tx, ty, plan_.seed, settings_.refresh_seconds, last_time_, time);
          if (c.tile_changed[tile]) c.tile_ref[tile] = sum;
        }
    });
  } else if (settings_.temporal) {
    parallel_for(plan_.tiles_y, [&](int t0, int t1) {
      for (int ty = t0; ty < t1; ++ty)
        for (int tx = 0; tx < plan_.tiles_x; ++tx) {
          const int x0 = tx * kTile, y0 = ty * kTile, x1 = std::min(w, x0 + kTile), y1 = std::min(h, y0 + kTile);
          uint32_t sum = 0;
          for (int y = y0; y < y1; ++y)
            for (int x = x0; x < x1; ++x) sum += c.edge[size_t(y) * w + x];
          c.tile_ref[size_t(ty) * plan_.tiles_x + tx] = sum;
        }
    });
  }
  parallel_for(h, [&](int y0, int y1) {
    for (int y = std::max(1, y0); y < y1; ++y) {
      const uint8_t* changed = c.tile_changed + size_t(y / kTile) * plan_.tiles_x;
      for (int x = 1; x < w; ++x) {
        if (keep && !changed[x / kTile]) continue;
        const uint32_t weight = point_weight(c.edge[size_t(y) * w + x], plan_.edge_weight_q16);
        c.flags[size_t(y) * w + x] = select_point(x, y, plan_.seed, weight, scale) ? 1 : 0;
      }
    }
  }, 8);
  int count = 0;
  const size_t pixels = size_t(w) * h;
  for (size_t i = 0; i < pixels; ++i)
    if (c.flags[i]) c.selected[count++] = int32_t(i);
  mesh_.build(plan_, c.selected, count);
  if (settings_.voronoi_check) cpu_voronoi_check(c.selected, count);
}

// The seed's route, measured against the exact mesh (same vertex order as the GPU: border ring, then interior).
void LowpolyStage::cpu_voronoi_check(const int32_t* selected, int count) {
  std::vector<uint32_t> sites = border_ring(plan_.border, plan_.width, plan_.height);
  for (int k = 0; k < std::min(count, plan_.capacity); ++k)
    sites.push_back(pack_xy(selected[k] % plan_.width, selected[k] / plan_.width));
  jfa_cpu(sites, plan_.width, plan_.height, JfaVariant::one_plus_plus_two, cpu_labels_);
  std::vector<int32_t> tris;
  square_triangles_cpu(cpu_labels_, plan_.width, plan_.height, tris);
  cpu_square_stats_ = compare_with_mesh(sites, tris, mesh_.triangles());
}

void LowpolyStage::cpu_shade(const RgbaView& in, const RgbaView& out) {
  CpuState& c = *cpu_;
  const std::vector<Triangle>& tris = mesh_.triangles();
  const int w = plan_.width, h = plan_.height;
  parallel_for(int(tris.size()), [&](int t0, int t1) {
    for (int t = t0; t < t1; ++t) {
      if (settings_.fill == Fill::centroid) {
        c.colors[t] = centroid_color(tris[t], in);
        continue;
      }
      const PixelBox b = pixel_box(tris[t], w, h);
      uint64_t sum[4] = {0, 0, 0, 0};
      uint32_t count = 0;
      for (int y = b.y0; y <= b.y1; ++y)
        for (int x = b.x0; x <= b.x1; ++x)
          if (covers(tris[t], x, y)) {
            const uint32_t p = in.row32(y)[x];
            for (int k = 0; k < 4; ++k) sum[k] += (p >> (8 * k)) & 0xFF;
            ++count;
          }
      c.colors[t] = mean_color(sum, count);
    }
  }, 16);
  parallel_for(int(tris.size()), [&](int t0, int t1) {
    for (int t = t0; t < t1; ++t) {
      const PixelBox b = pixel_box(tris[t], w, h);
      for (int y = b.y0; y <= b.y1; ++y)
        for (int x = b.x0; x <= b.x1; ++x)
          if (covers(tris[t], x, y))
            out.row32(y)[x] = plan_.line_q4 > 0 && on_line(tris[t], x, y, plan_.line_q4, w, h) ? plan_.line_color
                                                                                              : c.colors[t];
    }
  }, 16);
  if (plan_.smoothing_q8 > 0) {
    const bool first = !have_history_;
    parallel_for(h, [&](int y0, int y1) {
      for (int y = y0; y < y1; ++y)
        for (int x = 0; x < w; ++x) {
          uint16_t* s = c.smooth + 4 * (size_t(y) * w + x);
          out.row32(y)[x] = smooth_color(s, out.row32(y)[x], plan_.smoothing_q8, first);
        }
    }, 8);
  }
}

void LowpolyStage::process_cpu(const RgbaView& in, const RgbaView& out, const FrameInfo& frame) {
  if (in.size() != Size{plan_.width, plan_.height} || out.size() != in.size())
    throw Error(ExitCode::internal, fmt::format("stage 'lowpoly' configured for {}x{} but got {}x{}", plan_.width,
                                                plan_.height, in.width, in.height));
  const auto t0 = Clock::now();
  cpu_points(in, frame.time_seconds);
  const auto t1 = Clock::now();
  cpu_shade(in, out);
  have_history_ = true;
  last_time_ = frame.time_seconds;
  cpu_counters_ = {{"points_and_mesh_ms", ms_since(t0) - ms_since(t1)},
                   {"triangulate_ms", mesh_.build_ms()},
                   {"shading_ms", ms_since(t1)},
                   {"points", double(mesh_.point_count())},
                   {"triangles", double(mesh_.triangles().size())},
                   {"mesh_reused", mesh_.reused() ? 1.0 : 0.0},
                   {"strip_retries", double(mesh_.strip_retries())},
                   {"strip_fallback", mesh_.fell_back() ? 1.0 : 0.0},
                   {"points_dropped", double(mesh_.dropped())}};
  if (settings_.mesh == MeshRoute::squares) {
    add_repair_counters(mesh_.repair_stats(), cpu_counters_);
    cpu_counters_["mesh_fallbacks"] = double(mesh_.squares_fallbacks());
  }
  if (settings_.voronoi_check) {
    const SquareStats& q = cpu_square_stats_;
    cpu_counters_["square_triangles"] = q.triangles;
    cpu_counters_["square_not_ccw"] = q.not_ccw;
    cpu_counters_["square_delaunay"] = q.delaunay;
    cpu_counters_["square_distinct_delaunay"] = q.distinct_delaunay;
    cpu_counters_["square_missing"] = q.missing;
  }
}

void add_repair_counters(const RepairStats& r, StageCounters& c) {
  c["repair_square_triangles"] = r.square_triangles;
  c["repair_dropped_flipped"] = r.flipped;
  c["repair_dropped_not_delaunay"] = r.not_delaunay;
  c["repair_dropped_duplicates"] = r.certified - r.kept;
  c["repair_kept"] = r.kept;
  c["repair_triangles"] = r.repaired_triangles;
  c["repair_vertices"] = r.repaired_vertices;
  c["repair_searches"] = r.repair_searches;
  c["repair_known_overflow"] = r.known_overflow;
  c["repair_square_overflow"] = r.square_overflow;
}

std::optional<GpuCost> LowpolyStage::gpu_cost(Size in) const {
  // The diagnostic builds a second mesh on the host.
  if (settings_.voronoi_check) return std::nullopt;
  // A floor of small kernels and copies, then the pixels and the vertices:
  // 0.19 ms at 1920x1080 by default, 0.35 with 4 times the vertices, 0.56
  // at 3840x2160 (orchestration/gpu_cost_test.cpp). The squares route takes about
  // twice the star's time a pixel; lines add to the render; a temporal mode
  // compares tiles and keeps state each frame.
  const double megapixels = double(in.width) * in.height / 1e6;
  const double vertices_per_mp = double(make_plan(settings_, in).expected_points) / std::max(megapixels, 1e-6);
  double per_mp = 0.03 + 0.0065 * vertices_per_mp / 1000;
  if (settings_.line_width > 0) per_mp *= 1.2;
  double fixed = 0.15;
  if (settings_.mesh == MeshRoute::squares) fixed = 0.25, per_mp *= 2.2;
  if (is_temporal()) fixed += 0.2;
  return GpuCost{fixed + per_mp * megapixels, in};
}

double LowpolyStage::floor_bytes(Size in, Size) const {
  // Read the frame for the edges and again for the colours, write it once;
  // luma and edge maps (1 + 1 byte written, 9 + 1 read, mostly cached: 2 + 2).
  return (4.0 + 4.0 + 4.0 + 4.0) * double(in.width) * in.height;
}

}  // namespace sp::lowpoly
