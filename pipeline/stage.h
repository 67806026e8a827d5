#pragma once
#include <cmath>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "pipeline/cuda_handles.h"
#include "pipeline/image.h"
#include "pipeline/params.h"
#include "pipeline/scratch.h"

namespace sp {

enum class Backend { cpu, cuda };
const char* to_string(Backend b);

// Numbers a stage wants in the stats (e.g. solver iterations); averaged over frames.
using StageCounters = std::map<std::string, double>;

// A frame's GPU time through a stage (Stage::gpu_cost) and the size it leaves.
struct GpuCost {
  double milliseconds = 0;
  Size output;
};

// What a stage sees of the frame it processes.
struct FrameInfo {
  int64_t index = 0;  // 0-based frame number in output order
  double time_seconds = 0.0;
};

// Where this worker's segment of a segment-parallel run meets its
// neighbours', in the input's seconds (FrameInfo::time_seconds). A stage
// whose state no warm-up brings back can hand it over at a seam instead of
// restarting it (halftone).
struct SegmentSeams {
  std::optional<double> begins;       // this segment's first time; none: the input's start
  std::optional<double> next_begins;  // where the next segment begins; none: this one runs to the end
};

// One effect. The CUDA engine gives each frame in flight its own instance of
// a non-temporal stage (a lane of the chain), and runs a temporal stage's one
// instance on the lanes in frame order through events, so an instance and its
// scratch serve one frame at a time; each `--jobs` worker has its own chain.
// Stages never see codecs: only RGBA8 views on the backend they were
// configured for.
class Stage {
 public:
  virtual ~Stage() = default;

  // Called before the first frame and whenever the input size changes.
  // Allocate every scratch buffer here (through `scratch`), never in process_*:
  // steady state must not allocate. Returns the output size.
  virtual Size configure(Size input, Backend backend, ScratchAllocator& scratch) = 0;

  virtual void process_cpu(const RgbaView& in, const RgbaView& out, const FrameInfo& frame) = 0;
#if STYLEPIPE_HAS_CUDA
  // Enqueue all work on `stream`; never synchronize the host. Defined on the
  // .cu side of each stage; a CPU-only build has neither.
  virtual void process_cuda(const RgbaView& in, const RgbaView& out, const FrameInfo& frame,
                            cudaStream_t stream) = 0;
#endif

  // A stage that carries state from frame to frame (warm starts, temporal
  // smoothing) returns true; the pipeline then runs frames through it in order.
  virtual bool is_temporal() const { return false; }
  // A batch worker's chain goes on to its next clip: the next frame must come
  // out as a first frame after configure does, or the clip's output would
  // differ from its single run. A temporal stage with no cheaper way than
  // configure returns false, and the chain configures it again.
  virtual bool forget_history() { return !is_temporal(); }
  // A run may start on the CPU while the GPU starts, and go on there once it
  // is up. A temporal stage allows that only where a stage of its type and
  // parameters on the GPU can take over its state (take_history) and gives
  // the CPU's pictures to the bit from there: else the output would change
  // where the backends meet.
  virtual bool hands_history_over() const { return !is_temporal(); }
  // Takes the state of `from`: a configured stage of the same type and
  // parameters on the CPU, at the same size, after the frames before this
  // one's next. Call with no frame in flight. Only stages whose
  // hands_history_over() is true with state are asked.
  virtual void take_history(const Stage& from) { (void)from; }
  // True where process_cuda's launches depend on nothing but the views: no
  // host-side state, FrameInfo or per-frame host decision. The engine may
  // then capture a frame's launches once and replay them as a CUDA graph
  // for later frames in the same buffers (pipeline/frame_graphs.h).
  virtual bool replayable() const { return false; }
  // Frames a temporal stage must see before its output stands for the video
  // rather than a cold start: a segment worker runs this many frames before
  // its first one and discards their output. 0 for stages without state.
  virtual int warmup_frames() const { return 0; }
  // The same in seconds of input, for state kept for a time rather than a
  // number of frames; the plan converts it at the input's frame rate and adds
  // it to warmup_frames().
  virtual double warmup_seconds() const { return 0.0; }
  // State that no warm-up brings back, so that it restarts at each seam of a
  // segment-parallel run as at a scene cut; a plan of several segments says
  // so once. Empty where warm-up recovers the state.
  virtual std::string state_lost_at_seams() const { return {}; }
  // Segment-parallel runs: called once, before configure, with the seams of
  // this worker's segment. A single run never calls it.
  virtual void set_seams(const SegmentSeams&) {}

  // Bytes the stage must read and write per frame at its configured size, for
  // the bench's bandwidth floor. Default: read input once, write output once.
  virtual double floor_bytes(Size in, Size out) const {
    return 4.0 * (double(in.width) * in.height + double(out.width) * out.height);
  }
  // The GPU time a frame at this input size takes the stage, at most, and
  // the size it gives the next: `stylepipe bench`'s device milliseconds a
  // frame of the stage alone on an H200 (conversions included), bounded by a
  // formula of its parameters; nullopt where they bound nothing (iterations,
  // dot counts) or it was not measured. `--jobs auto` leaves GPUs out only
  // for chains whose stages all say (orchestration/gpu_need.h): a wrong
  // nullopt costs a GPU's start, a number too low the GPUs a chain needed.
  virtual std::optional<GpuCost> gpu_cost(Size) const { return std::nullopt; }
  virtual StageCounters counters() const { return {}; }
};

// Frames after which an exponential moving average h = a h_prev + (1-a) h_new
// forgets its start: a^K <= 1/512, below half a level of an 8-bit value.
int ema_warmup_frames(double a);

// What stages declare as warm-up (warmup_frames and warmup_seconds, each
// added up over a chain), in frames at `frames_per_second`: one more frame
// where seconds are counted, for the rounding and an average rate.
struct Warmup {
  int frames = 0;
  double seconds = 0;
  void add(const Stage& stage) { frames += stage.warmup_frames(), seconds += stage.warmup_seconds(); }
  int frames_at(double frames_per_second) const {
    return seconds > 0 ? frames + int(std::ceil(seconds * frames_per_second)) + 1 : frames;
  }
};

struct StageDescriptor {
  std::string name;
  std::string summary;
  std::vector<ParamSpec> params;
  // Cross-parameter checks beyond the table (types and ranges are already checked).
  // Returns an error message naming the offending field, or nullopt.
  std::function<std::optional<std::string>(const Params&)> validate;
  // Every rule `validate` checks, by name: the schema and docs list them.
  std::vector<ParamRule> rules;
  std::function<std::unique_ptr<Stage>(const Params&)> create;
  // Optional: work of configure() that needs no device and is the same for
  // every run of these parameters (pencil's generated texture, 90 ms), made
  // into a process-wide cache. A run calls it on a thread of its own while
  // the GPU starts, so that configure() finds it made.
  std::function<void(const Params&)> prepare_host;
};

class StageRegistry {
 public:
  static StageRegistry& instance();
  void add(StageDescriptor d);
  const StageDescriptor* find(const std::string& name) const;
  // A new instance of the named stage; an unknown name is a config error
  // (configs are checked against this registry first, so only a caller
  // that skipped that check meets it).
  std::unique_ptr<Stage> create(const std::string& name, const Params& params) const;
  std::vector<const StageDescriptor*> all() const;  // sorted by name

 private:
  std::map<std::string, StageDescriptor> stages_;
};

// Put one of these at namespace scope in the stage's CPU file:
//   static sp::StageRegistration reg{make_xbr_descriptor()};
struct StageRegistration {
  explicit StageRegistration(StageDescriptor d) { StageRegistry::instance().add(std::move(d)); }
};

}  // namespace sp
