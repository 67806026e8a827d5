#pragma once
// Electrostatic halftoning (stippling) after Schmaltz et al. (2010) with the
// NFFT fast summation of Teuber et al. (2011) and the GPU design of Gwosdek,
// Schmaltz, Weickert and Teuber, "Fast Electrostatic Halftoning" (2011).
// Dots are particles attracted by the image's ink and repelled by each other;
// the frame is redrawn as anti-aliased discs at their positions. See README.md.
#include <array>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "pipeline/cuda_handles.h"
#include "pipeline/stage.h"
#include "stages/halftone/fastsum.h"
#include "stages/halftone/handover.h"

namespace sp::halftone {

// Colour stippling: one dot set per channel (halftone_colour.h).
enum class ColourMode { mono, cmy, rgb };

// Neighbours inside the near-field radius eps_I: it sets the FFT grid (N ~ 1 /
// eps_I), and the near field grows as it. At 1080p video 36 is about the
// fastest (2.03 ms a frame against 2.31 at 24: the grid 3600 -> 2916, 1.5x the
// near pairs; the FFT size's factors matter as much, 40 gives 2.20); the forces
// keep the seed's accuracy (HalftoneFastsum.CheaperGridsStayAccurate).
// docs/perf.md, halftone v10.
inline constexpr double kDefaultNearNeighbours = 36;

struct HalftoneSettings {
  double dots_per_pixel = 0.25;  // dots per unit of ink (a fully inked pixel is 1)
  int dots = 0;                  // explicit dot count; 0 = from the ink sum
  int iterations = 100;          // cold start (first frame)
  int video_iterations = 8;      // warm-started frames: the most
  double video_tolerance = 0;    // warm frames stop once an iteration's RMS move is under this (dot spacings)
  int far_field_every = 1;       // warm frames: spread + FFTs on every k-th iteration, interpolation on each
  double step = 0.1;             // tau, in units of the mean dot spacing squared (see README)
  double shake = 0.5;            // shaking amplitude at iteration 0, in dot spacings
  int shake_every = 10;          // shake on every k-th iteration (cold start only)
  uint64_t seed = 1;
  FastsumSettings fastsum;       // m, p, sigma; near radius from near_neighbours
  double near_neighbours = kDefaultNearNeighbours;  // mean neighbours within eps_I at the reference density
  double dot_radius = 0;         // pixels; 0 = disc of area 1 / dots_per_pixel
  double hold_distance = 0;      // warm frames: a dot stays drawn where it was until it moves this far (pixels)
  std::array<double, 3> background = {255, 255, 255};
  std::array<double, 3> dot_color = {0, 0, 0};
  std::string points_out;        // "" = none; .svg or .csv; "%d" is replaced by the frame index
  bool profile = false;          // time the phases (CUDA: events; CPU: clock), print the means at the end
  ColourMode channels = ColourMode::mono;
  int ink_channel = -1;          // -1: ink from the luma; 0..2: from that component (colour stippling)
  bool direct = false;           // repulsion: direct O(M^2) sum instead of the fast summation (baseline)
  bool lookup_map = false;       // CUDA near field: the seed's lookup map instead of the cell table
  double seam_seconds = 0.5;     // segment-parallel runs: the handover before a seam (handover.h); 0 = none
  bool deterministic = false;    // CUDA: the far field's spread in fixed point, every frame (repeats to the bit)
};

StageDescriptor make_halftone_descriptor();
Params halftone_default_params();
HalftoneSettings parse_halftone_params(const Params& p);

class HalftoneStage final : public Stage {
 public:
  explicit HalftoneStage(HalftoneSettings settings);
  ~HalftoneStage() override;

  Size configure(Size input, Backend backend, ScratchAllocator& scratch) override;
  void process_cpu(const RgbaView& in, const RgbaView& out, const FrameInfo& frame) override;
#if STYLEPIPE_HAS_CUDA
  void process_cuda(const RgbaView& in, const RgbaView& out, const FrameInfo& frame, cudaStream_t stream) override;
#endif
  bool is_temporal() const override { return true; }
  int warmup_frames() const override;
  double warmup_seconds() const override { return settings_.seam_seconds; }
  std::string state_lost_at_seams() const override;
  void set_seams(const SegmentSeams& seams) override;
  double floor_bytes(Size in, Size out) const override;
  StageCounters counters() const override;

  const HalftoneSettings& settings() const { return settings_; }
  const FastsumPlan& plan() const { return plan_; }
  int capacity() const { return capacity_; }
  // The last frame's particles and numbers (CUDA: synchronizes; for tests and tools).
  std::vector<float2> particles() const;
  FrameNumbers numbers() const;
  // Before a seam: the next segment's state this worker hands over to (null when none).
  const HalftoneStage* handover_state() const { return next_.get(); }

 private:
  struct Cpu;
  struct Cuda;
  void configure_cuda(ScratchAllocator& scratch);
  void release_cuda();
  std::vector<float2> particles_cuda() const;
  FrameNumbers numbers_cuda() const;
  void add_profile_counters(StageCounters& counters) const;  // profile: true (CUDA)
  // One frame of the particle system, up to the dots' final sort (the render's cell table).
  void advance_cpu(const RgbaView& in);
#if STYLEPIPE_HAS_CUDA
  // exact: sums that repeat to the bit. warm_graph: warm frames replay the
  // graph captured on the first (a handover's launch one by one).
  void advance_cuda(const RgbaView& in, cudaStream_t stream, bool warm_graph, bool exact);
  // hold_distance: the drawn places follow the last sort's permutation; at
  // the frame's end (settle, before frames_done_ counts it) they are held or moved.
  void carry_drawn_through_sort(const int* count, bool settle, cudaStream_t stream);
#endif
  // Where a frame at `time_seconds` stands against the seams (handover.h).
  struct SeamStep {
    bool before_own_state = false;  // a lead-in frame before this worker's state starts: not run
    bool handing_over = false;      // next_ runs too, and shows where the handover field is below threshold
    bool exact = false;             // the state must repeat to the bit (CUDA: exact sums)
    float threshold = 0.f;
  };
  // The states that must repeat to the bit: deterministic ones, and those a
  // handover needs: next_ in the worker before a seam, and the frames before
  // its segment in the worker after it.
  bool needs_exact_sums() const;
  SeamStep seam_step(double time_seconds);  // called once per frame, in order
  HandoverField handover_field(float threshold) const;
  // Whether iteration k lags (far_field_every): a cold frame spreads the dots
  // and transforms on each iteration, a warm one on every k-th; the iterations
  // between evaluate the last field. They do not sort either: the dots stay in
  // the order and the cell table of the last spread's sort, and move in place.
  // Within the lag budget (far_field_lag) they moved a fraction of a cell since,
  // so a pair the stale table misses is near the cut-off, where the near field
  // goes to 0. Direct repulsion has no far field to lag.
  // hold_distance: the dots are drawn from their own array (Cpu/Cuda::drawn).
  bool holds_dots() const { return settings_.hold_distance > 0; }
  bool lagged_iteration(bool warm, int k) const {
    return !settings_.direct && warm && k % settings_.far_field_every != 0;
  }

  HalftoneSettings settings_;
  Size size_;
  Backend backend_ = Backend::cpu;
  FastsumPlan plan_;
  int capacity_ = 0;
  float dot_radius_ = 0;
  float map_slot_px_ = 1;  // lookup map: one slot per dot at full ink
  int frames_done_ = 0;  // since configure: 0 = cold start next
  // configure's CUDA steps in ms (the debug log's start-up breakdown): the
  // fast summation's and the attraction's spectra, plans and buffers; the rest.
  double configure_ms_[3] = {0, 0, 0};
  SegmentSeams seams_;
  std::optional<double> last_time_;  // the previous frame's, for the frame duration
  std::unique_ptr<HalftoneStage> next_;  // before a seam: the state the next segment's worker starts
  bool is_next_state_ = false;           // this is such a next_
  std::unique_ptr<HandoverQuantiles> handover_quantiles_;
  std::unique_ptr<Cpu> cpu_;
  Cuda* cuda_ = nullptr;  // defined in halftone_cuda.cu
};

// Shared between the backends (halftone_frame.cpp).
CountRule count_rule(const HalftoneSettings& s, int capacity);
// Shaking amplitude (pixels) at iteration k of a cold start, 0 when none.
float shake_amplitude(const HalftoneSettings& s, int k, float spacing);
RenderParams render_params(const HalftoneSettings& s, float radius);
InkScale stage_ink_scale(const HalftoneSettings& s);
// Writes the dots as SVG circles or CSV rows, by the path's extension.
void write_points(const std::string& pattern, int64_t frame, const float2* pos, int count, Size size, float radius,
                  const std::array<double, 3>& background, const std::array<double, 3>& dot_color);

}  // namespace sp::halftone
