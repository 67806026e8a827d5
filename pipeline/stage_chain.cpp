#include "pipeline/stage_chain.h"

#include <algorithm>
#include <chrono>

#include "pipeline/errors.h"
#include "pipeline/stage_chain_events.h"

namespace sp {

constexpr int kIntermediateFormatTag = 2000;

StageChain::StageChain(std::vector<StageSpec> specs, Backend backend, BufferPool& pool, int lanes)
    : specs_(std::move(specs)), backend_(backend), pool_(pool), lanes_(backend == Backend::cuda ? std::max(1, lanes) : 1) {
  const MemoryKind kind = backend == Backend::cuda ? MemoryKind::device : MemoryKind::host;
  const StageRegistry& registry = StageRegistry::instance();
  for (const auto& spec : specs_) {
    StageLanes& s = stages_.emplace_back();
    s.instances.push_back(registry.create(spec.name, spec.params));
    const int instances = s.instances.front()->is_temporal() ? 1 : lanes_;
    for (int k = 1; k < instances; ++k) s.instances.push_back(registry.create(spec.name, spec.params));
    if (spec.seams)
      for (auto& instance : s.instances) instance->set_seams(*spec.seams);
    for (int k = 0; k < instances; ++k) s.scratch.push_back(std::make_unique<PooledScratch>(pool_, kind));
    if (s.shared() && lanes_ > 1) {
      s.done.resize(size_t(lanes_));
      create_order_events(s.done);
    }
  }
}

StageChain::~StageChain() {
  for (StageLanes& s : stages_) destroy_order_events(s.done);
}

Stage& StageChain::stage(size_t i, int lane) const {
  const StageLanes& s = stages_[i];
  return *s.instances[s.shared() ? 0 : size_t(lane)];
}

Size StageChain::configure(Size input) {
  intermediates_.clear();
  intermediates_.resize(size_t(lanes_));
  sizes_.assign(1, input);
  for (size_t i = 0; i < stages_.size(); ++i) {
    StageLanes& s = stages_[i];
    Size out;
    for (size_t k = 0; k < s.instances.size(); ++k) {
      s.scratch[k]->release_all();
      out = s.instances[k]->configure(sizes_.back(), backend_, *s.scratch[k]);
    }
    s.last_done = nullptr;
    if (out.width <= 0 || out.height <= 0)
      throw Error(ExitCode::config, "stage '" + specs_[i].name + "' produced an empty frame from " +
                                        std::to_string(sizes_.back().width) + "x" +
                                        std::to_string(sizes_.back().height));
    sizes_.push_back(out);
  }
  const MemoryKind kind = backend_ == Backend::cuda ? MemoryKind::device : MemoryKind::host;
  for (auto& lane : intermediates_)
    for (size_t i = 0; i + 1 < stages_.size(); ++i) {
      const Size s = sizes_[i + 1];
      lane.emplace_back(pool_, BufferPool::Key{kind, s.width, s.height, kIntermediateFormatTag,
                                               size_t(s.width) * s.height * 4});
    }
  input_ = input;
  output_ = sizes_.back();
  return output_;
}

void StageChain::forget_history() {
  for (size_t i = 0; i < stages_.size(); ++i) {
    StageLanes& s = stages_[i];
    for (size_t k = 0; k < s.instances.size(); ++k) {
      if (s.instances[k]->forget_history()) continue;
      s.scratch[k]->release_all();
      s.instances[k]->configure(sizes_[i], backend_, *s.scratch[k]);
    }
    s.last_done = nullptr;
  }
}

void StageChain::take_history(const StageChain& from) {
  if (from.specs_.size() != specs_.size() || from.input_ != input_)
    throw Error(ExitCode::internal, "a chain's state can only move to a chain of the same stages at the same size");
  for (size_t i = 0; i < stages_.size(); ++i) {
    Stage& taker = *stages_[i].instances.front();
    if (!taker.is_temporal()) continue;
    if (!taker.hands_history_over())
      throw Error(ExitCode::internal, "stage '" + specs_[i].name + "' cannot take another backend's state");
    taker.take_history(*from.stages_[i].instances.front());
    stages_[i].last_done = nullptr;
  }
}

size_t StageChain::extra_lane_bytes() const {
  size_t bytes = 0;
  for (const StageLanes& s : stages_)
    for (size_t k = 1; k < s.scratch.size(); ++k) bytes += s.scratch[k]->bytes();
  for (size_t lane = 1; lane < intermediates_.size(); ++lane)
    for (const PooledBuffer& b : intermediates_[lane]) bytes += b.bytes();
  return bytes;
}

double StageChain::floor_bytes(size_t i) const { return stage(i, 0).floor_bytes(sizes_[i], sizes_[i + 1]); }

RgbaView StageChain::intermediate(size_t i, int lane) const {
  const Size s = sizes_[i + 1];
  return {intermediates_[size_t(lane)][i].data(), s.width, s.height, size_t(s.width) * 4};
}

void StageChain::run_cpu(const RgbaView& in, const RgbaView& out, const FrameInfo& frame,
                         std::vector<double>& stage_ms) {
  stage_ms.resize(stages_.size());
  for (size_t i = 0; i < stages_.size(); ++i) {
    const RgbaView src = i == 0 ? in : intermediate(i - 1, 0);
    const RgbaView dst = i + 1 == stages_.size() ? out : intermediate(i, 0);
    const auto t0 = std::chrono::steady_clock::now();
    stage(i, 0).process_cpu(src, dst, frame);
    stage_ms[i] = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  }
}

bool StageChain::any_temporal() const {
  for (const StageLanes& s : stages_)
    if (s.instances.front()->is_temporal()) return true;
  return false;
}

bool hands_history_over(const std::vector<StageSpec>& specs) {
  const StageRegistry& registry = StageRegistry::instance();
  for (const StageSpec& spec : specs)
    if (!registry.create(spec.name, spec.params)->hands_history_over()) return false;
  return true;
}

bool StageChain::replayable() const {
  for (const StageLanes& s : stages_)
    if (s.instances.front()->is_temporal() || !s.instances.front()->replayable()) return false;
  return true;
}

}  // namespace sp
