#include "pipeline/stage_chain.h"

#include <chrono>

#include "pipeline/errors.h"

namespace sp {

constexpr int kIntermediateFormatTag = 2000;

StageChain::StageChain(std::vector<StageSpec> specs, Backend backend, BufferPool& pool)
    : specs_(std::move(specs)), backend_(backend), pool_(pool) {
  const MemoryKind kind = backend == Backend::cuda ? MemoryKind::device : MemoryKind::host;
  for (const auto& spec : specs_) {
    const StageDescriptor* d = StageRegistry::instance().find(spec.name);
    if (!d) throw Error(ExitCode::config, "stage '" + spec.name + "' is unknown");
    stages_.push_back(d->create(spec.params));
    scratch_.push_back(std::make_unique<PooledScratch>(pool_, kind));
  }
}

StageChain::~StageChain() = default;

Size StageChain::configure(Size input) {
  intermediates_.clear();
  sizes_.assign(1, input);
  for (size_t i = 0; i < stages_.size(); ++i) {
    scratch_[i]->release_all();
    const Size out = stages_[i]->configure(sizes_.back(), backend_, *scratch_[i]);
    if (out.width <= 0 || out.height <= 0)
      throw Error(ExitCode::config, "stage '" + specs_[i].name + "' produced an empty frame from " +
                                        std::to_string(sizes_.back().width) + "x" +
                                        std::to_string(sizes_.back().height));
    sizes_.push_back(out);
  }
  const MemoryKind kind = backend_ == Backend::cuda ? MemoryKind::device : MemoryKind::host;
  for (size_t i = 0; i + 1 < stages_.size(); ++i) {
    const Size s = sizes_[i + 1];
    intermediates_.emplace_back(pool_, BufferPool::Key{kind, s.width, s.height, kIntermediateFormatTag,
                                                       size_t(s.width) * s.height * 4});
  }
  input_ = input;
  output_ = sizes_.back();
  return output_;
}

double StageChain::floor_bytes(size_t i) const { return stages_[i]->floor_bytes(sizes_[i], sizes_[i + 1]); }

RgbaView StageChain::intermediate(size_t i) const {
  const Size s = sizes_[i + 1];
  return {intermediates_[i].data(), s.width, s.height, size_t(s.width) * 4};
}

void StageChain::run_cpu(const RgbaView& in, const RgbaView& out, const FrameInfo& frame,
                         std::vector<double>& stage_ms) {
  stage_ms.resize(stages_.size());
  for (size_t i = 0; i < stages_.size(); ++i) {
    const RgbaView src = i == 0 ? in : intermediate(i - 1);
    const RgbaView dst = i + 1 == stages_.size() ? out : intermediate(i);
    const auto t0 = std::chrono::steady_clock::now();
    stages_[i]->process_cpu(src, dst, frame);
    stage_ms[i] = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  }
}

bool StageChain::any_temporal() const {
  for (const auto& stage : stages_)
    if (stage->is_temporal()) return true;
  return false;
}

}  // namespace sp
