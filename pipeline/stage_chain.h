#pragma once

#include <memory>
#include <string>
#include <vector>

#include "pipeline/buffer_pool.h"
#include "pipeline/cuda_handles.h"
#include "pipeline/params.h"
#include "pipeline/stage.h"

namespace sp {

struct StageSpec {
  std::string name;
  Params params;
};

// The configured stages of one pipeline, run one after the other on RGBA8
// frames. One instance serves all frames in flight: their stage sections are
// ordered by events (CUDA) or run one at a time (CPU), so scratch and the
// intermediate buffers between stages are shared and temporal stages see
// frames in order.
class StageChain {
 public:
  StageChain(std::vector<StageSpec> specs, Backend backend, BufferPool& pool);
  ~StageChain();

  // (Re)configures every stage for `input`; returns the final output size.
  // Intermediate buffers and stage scratch for the previous size are released.
  Size configure(Size input);

  Size input_size() const { return input_; }
  Size output_size() const { return output_; }
  size_t size() const { return stages_.size(); }
  const std::string& name(size_t i) const { return specs_[i].name; }
  Size stage_input(size_t i) const { return sizes_[i]; }
  Size stage_output(size_t i) const { return sizes_[i + 1]; }
  double floor_bytes(size_t i) const;
  StageCounters counters(size_t i) const { return stages_[i]->counters(); }
  bool any_temporal() const;

  // CPU: runs all stages, timing each into stage_ms (resized to size()).
  void run_cpu(const RgbaView& in, const RgbaView& out, const FrameInfo& frame,
               std::vector<double>& stage_ms);
  // CUDA (stage_chain_cuda.cpp, CUDA builds only): enqueues all stages on `stream`; marks must hold size()+1 events,
  // recorded before the first stage and after each one for per-stage timing.
  void run_cuda(const RgbaView& in, const RgbaView& out, const FrameInfo& frame, cudaStream_t stream,
                const std::vector<cudaEvent_t>& marks);

 private:
  RgbaView intermediate(size_t i) const;

  std::vector<StageSpec> specs_;
  Backend backend_;
  BufferPool& pool_;
  std::vector<std::unique_ptr<Stage>> stages_;
  std::vector<std::unique_ptr<PooledScratch>> scratch_;
  std::vector<PooledBuffer> intermediates_;  // between stage i and i+1
  std::vector<Size> sizes_;                  // sizes_[i] = input of stage i; back() = output
  Size input_, output_;
};

}  // namespace sp
