#pragma once

#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "pipeline/buffer_pool.h"
#include "pipeline/cuda_handles.h"
#include "pipeline/params.h"
#include "pipeline/stage.h"

namespace sp {

struct StageSpec {
  StageSpec() = default;
  StageSpec(std::string name_, Params params_, std::optional<SegmentSeams> seams_ = std::nullopt)
      : name(std::move(name_)), params(std::move(params_)), seams(seams_) {}
  std::string name;
  Params params;
  std::optional<SegmentSeams> seams;  // a segment worker's (Stage::set_seams)
};

// The configured stages of one pipeline, run one after the other on RGBA8
// frames, in `lanes` lanes: frames in flight on different lanes (CUDA
// streams) run their stage sections at the same time. A non-temporal stage
// has an instance, scratch and output buffer per lane; a temporal stage has
// one instance that every lane uses in frame order (an event chain), because
// each frame continues its state. The CPU runs one frame at a time: one lane.
class StageChain {
 public:
  StageChain(std::vector<StageSpec> specs, Backend backend, BufferPool& pool, int lanes = 1);
  ~StageChain();

  // (Re)configures every stage for `input`; returns the final output size.
  // Intermediate buffers and stage scratch for the previous size are released.
  Size configure(Size input);
  // The next frame is a first frame, as after configure, at the same size
  // (Stage::forget_history). Call with no frame in flight.
  void forget_history();
  // Each temporal stage takes the state of `from`'s (the same stages, configured
  // on the CPU at the same size, after the frames before this chain's next).
  // Call with no frame in flight on either chain.
  void take_history(const StageChain& from);

  Size input_size() const { return input_; }
  Size output_size() const { return output_; }
  size_t size() const { return stages_.size(); }
  const std::string& name(size_t i) const { return specs_[i].name; }
  Size stage_input(size_t i) const { return sizes_[i]; }
  Size stage_output(size_t i) const { return sizes_[i + 1]; }
  double floor_bytes(size_t i) const;
  // Of the frame that ran last on `lane`.
  StageCounters counters(size_t i, int lane = 0) const { return stage(i, lane).counters(); }
  bool any_temporal() const;
  // Every stage replayable and none temporal: a frame's launches may be a replayed graph.
  bool replayable() const;
  int lanes() const { return lanes_; }
  // Device memory the extra lanes take (instances' scratch and buffers between stages).
  size_t extra_lane_bytes() const;

  // CPU: runs all stages, timing each into stage_ms (resized to size()).
  void run_cpu(const RgbaView& in, const RgbaView& out, const FrameInfo& frame,
               std::vector<double>& stage_ms);
  // CUDA (stage_chain_cuda.cpp, CUDA builds only): enqueues all stages on `stream`; marks holds size()+1 events,
  // recorded before the first stage and after each one for per-stage timing, or none (untimed).
  // Frames must be enqueued in frame order (the temporal stages' order).
  void run_cuda(const RgbaView& in, const RgbaView& out, const FrameInfo& frame, cudaStream_t stream,
                const std::vector<cudaEvent_t>& marks, int lane = 0);

 private:
  // One stage's instances: one per lane, or one shared by all (temporal).
  struct StageLanes {
    std::vector<std::unique_ptr<Stage>> instances;
    std::vector<std::unique_ptr<PooledScratch>> scratch;
    std::vector<cudaEvent_t> done;   // per lane: its frame's pass through a shared stage
    cudaEvent_t last_done = nullptr;  // the latest frame's, which the next one waits for
    bool shared() const { return instances.size() == 1; }
  };
  Stage& stage(size_t i, int lane) const;
  RgbaView intermediate(size_t i, int lane) const;

  std::vector<StageSpec> specs_;
  Backend backend_;
  BufferPool& pool_;
  int lanes_ = 1;
  std::vector<StageLanes> stages_;
  std::vector<std::vector<PooledBuffer>> intermediates_;  // [lane][i]: between stage i and i+1
  std::vector<Size> sizes_;                  // sizes_[i] = input of stage i; back() = output
  Size input_, output_;
};

// Whether every temporal stage of these could hand its state over from the
// CPU to the GPU (Stage::hands_history_over), known before any of them is
// configured (their instances are made, nothing more).
bool hands_history_over(const std::vector<StageSpec>& specs);

}  // namespace sp
