#pragma once
// Test-only stages for the config tests: one with a parameter of every type,
// one without parameters. Registered on first use; the `test_` prefix keeps
// them apart from the real stages linked into the same binary.
#include <memory>
#include <stdexcept>

#include "pipeline/stage.h"

namespace sp::test {

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
    every.create = [](const Params&) -> std::unique_ptr<Stage> {
      throw std::logic_error("test_every is for config tests only");
    };
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
