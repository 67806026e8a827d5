#pragma once
// Test-only stages for the config tests: one with a parameter of every type,
// one without parameters. Registered on first use; the `test_` prefix keeps
// them apart from the real stages linked into the same binary.
#include <cstring>
#include <memory>

#include "pipeline/stage.h"

#if STYLEPIPE_HAS_CUDA
#include <cuda_runtime.h>

#include "pipeline/cuda_check.h"
#endif

namespace sp::test {

// Identity, so that any other test that runs every registered stage finds
// these harmless.
class ConfigTestStage : public Stage {
 public:
  Size configure(Size input, Backend, ScratchAllocator&) override { return input; }
  void process_cpu(const RgbaView& in, const RgbaView& out, const FrameInfo&) override {
    for (int y = 0; y < in.height; ++y) std::memcpy(out.row(y), in.row(y), size_t(in.width) * 4);
  }
#if STYLEPIPE_HAS_CUDA
  void process_cuda(const RgbaView& in, const RgbaView& out, const FrameInfo&, cudaStream_t stream) override {
    SP_CUDA_CHECK(cudaMemcpy2DAsync(out.data, out.pitch, in.data, in.pitch, size_t(in.width) * 4, in.height,
                                    cudaMemcpyDeviceToDevice, stream));
  }
#endif
};

inline std::vector<ParamSpec> every_type_table() {
  return {
      {"flag", ParamType::boolean, false, {}, {}, {}, "A switch."},
      {"count", ParamType::integer, int64_t(3), 1, 10, {}, "How many."},
      {"ratio", ParamType::number, 0.5, 0.0, 1.0, {}, "A fraction."},
      {"label", ParamType::string, std::string("hello"), {}, {}, {}, "Free text."},
      {"mode", ParamType::choice, std::string("fast"), {}, {}, {"fast", "slow", "careful"}, "How to go."},
      {"weights", ParamType::number_list, std::vector<double>{1.0, 2.0}, -5.0, 5.0, {}, "Per-channel weights."},
      {"width", ParamType::integer, int64_t(0), 1, 16384, {}, "Output width; default: the input's.", true},
      {"gain", ParamType::number, 1.0, {}, {}, {}, "Unbounded factor."},
  };
}

inline void register_config_test_stages() {
  static const bool registered = [] {
    StageDescriptor every;
    every.name = "test_every";
    every.summary = "Config test stage with a parameter of every type.";
    every.params = every_type_table();
    every.validate = [](const Params& p) -> std::optional<std::string> {
      if (p.get_int("count") > 5 && p.get_string("mode") == "fast")
        return "count above 5 needs mode 'slow' or 'careful'";
      if (p.get_string("label") == "refuse") return "this instance refuses to run";
      return std::nullopt;
    };
    every.rules = {{"count_above_5_needs_slow_mode", "count above 5 needs mode slow or careful."},
                   {"label_not_refuse", "label is not 'refuse'."}};
    every.create = [](const Params&) -> std::unique_ptr<Stage> { return std::make_unique<ConfigTestStage>(); };
    StageRegistry::instance().add(every);

    StageDescriptor empty;
    empty.name = "test_empty";
    empty.summary = "Config test stage without parameters.";
    empty.create = every.create;
    StageRegistry::instance().add(empty);
    return true;
  }();
  (void)registered;
}

}  // namespace sp::test
