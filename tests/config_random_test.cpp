// Randomized configs: values written in YAML come back exactly, and errors
// planted at known places are reported at those places, each of them.
#include <algorithm>
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "pipeline/config.h"
#include "pipeline/errors.h"
#include "tests/config_test_stages.h"
#include "tests/support/test_support.h"

namespace sp {
namespace {

struct Written {
  std::string key, text;  // as written in the YAML
  ParamValue value;       // what the loader must produce
};

std::string random_word(std::mt19937_64& rng) {
  static const char letters[] = "abcdefghijklmnopqrstuvwxyz0123456789_";
  std::string s(1 + rng() % 12, 'a');
  for (char& c : s) c = letters[rng() % (sizeof letters - 1)];
  return s;
}

// A random valid entry for each parameter of test_every, or none (left to the default).
std::vector<Written> random_stage_values(std::mt19937_64& rng) {
  std::vector<Written> out;
  auto maybe = [&] { return rng() % 3 != 0; };
  auto uniform = [&](double lo, double hi) { return std::uniform_real_distribution<double>(lo, hi)(rng); };
  if (maybe()) {
    const bool b = rng() % 2;
    static const char* spellings[2][3] = {{"false", "False", "FALSE"}, {"true", "True", "TRUE"}};
    out.push_back({"flag", spellings[b][rng() % 3], b});
  }
  const int64_t count = 1 + int64_t(rng() % 10);
  if (maybe() || count > 5) out.push_back({"count", fmt::format("{}", count), count});
  // The stage refuses count > 5 with mode fast.
  static const char* modes[] = {"fast", "slow", "careful"};
  const std::string mode = modes[count > 5 ? 1 + rng() % 2 : rng() % 3];
  if (maybe() || count > 5) out.push_back({"mode", mode, mode});
  if (maybe()) {
    const double r = uniform(0.0, 1.0);
    out.push_back({"ratio", fmt::format("{}", r), r});  // shortest text that reads back exactly
  }
  if (maybe()) {
    std::string label = random_word(rng);
    out.push_back({"label", "\"" + label + "\"", label});
  }
  if (maybe()) {
    std::vector<double> w(rng() % 6);
    std::string text = "[";
    for (size_t i = 0; i < w.size(); ++i) {
      w[i] = rng() % 4 == 0 ? double(int(rng() % 11) - 5) : uniform(-5.0, 5.0);
      text += (i ? ", " : "") + fmt::format("{}", w[i]);
    }
    out.push_back({"weights", text + "]", w});
  }
  if (maybe()) {
    const int64_t width = 1 + int64_t(rng() % 16384);
    out.push_back({"width", fmt::format("{}", width), width});
  }
  if (maybe()) {
    const double g = uniform(-1.0, 1.0) * std::pow(10.0, double(int(rng() % 41) - 20));
    out.push_back({"gain", fmt::format("{}", g), g});
  }
  std::shuffle(out.begin(), out.end(), rng);
  return out;
}

TEST(ConfigRandomTest, WrittenValuesComeBackExactlyWithDefaultsForTheRest) {
  test::register_config_test_stages();
  const uint64_t seed = test::fresh_seed();
  SCOPED_TRACE(fmt::format("seed {}", seed));
  std::mt19937_64 rng(seed);
  const Params defaults = default_params(test::every_type_table());
  for (int round = 0; round < 200; ++round) {
    const size_t stage_count = 1 + rng() % 4;
    std::vector<std::vector<Written>> stages;
    std::string yaml = "pipeline:\n";
    std::vector<int> stage_lines;
    int line = 2;
    for (size_t s = 0; s < stage_count; ++s) {
      stages.push_back(random_stage_values(rng));
      const bool flow = rng() % 2;
      stage_lines.push_back(line);
      line += flow ? 1 : 1 + int(stages.back().size());
      yaml += flow ? "  - test_every: {" : "  - test_every:\n";
      for (size_t i = 0; i < stages.back().size(); ++i) {
        const Written& w = stages.back()[i];
        yaml += flow ? fmt::format("{}{}: {}", i ? ", " : "", w.key, w.text) : fmt::format("      {}: {}\n", w.key, w.text);
      }
      if (flow) yaml += "}\n";
    }
    SCOPED_TRACE(yaml);
    Config c;
    try {
      c = parse_config(yaml, "random.yaml");
    } catch (const Error& e) {
      FAIL() << e.what();
    }
    ASSERT_EQ(c.stages.size(), stage_count);
    for (size_t s = 0; s < stage_count; ++s) {
      const Params& p = c.stages[s].params;
      EXPECT_EQ(c.stages[s].line, stage_lines[s]);
      EXPECT_EQ(c.stages[s].column, 5);
      for (const auto& [name, value] : defaults.values()) {
        auto written = std::find_if(stages[s].begin(), stages[s].end(),
                                    [&key = name](const Written& w) { return w.key == key; });
        if (written == stages[s].end()) {
          EXPECT_FALSE(p.given(name)) << name;
          EXPECT_EQ(p.values().at(name), value) << name;
        } else {
          EXPECT_TRUE(p.given(name)) << name;
          EXPECT_EQ(p.values().at(name), written->value) << name << " written as " << written->text;
        }
      }
    }
  }
}

// One random out-of-range or wrongly typed value per stage, each stage in
// block style so the expected line and column follow from the text.
TEST(ConfigRandomTest, PlantedErrorsAreAllReportedWhereTheyAre) {
  test::register_config_test_stages();
  const uint64_t seed = test::fresh_seed();
  SCOPED_TRACE(fmt::format("seed {}", seed));
  std::mt19937_64 rng(seed);
  for (int round = 0; round < 100; ++round) {
    std::string yaml = "# planted errors\npipeline:\n";
    int line = 3;
    std::vector<std::string> expected;
    const size_t stage_count = 1 + rng() % 5;
    for (size_t s = 0; s < stage_count; ++s) {
      yaml += "  - test_every:\n";
      ++line;
      const size_t good_before = rng() % 3;
      // Valid values before the planted one; keys differ from every planted key.
      const char* good[] = {"label: \"ok\"", "gain: 2.5"};
      if (rng() % 2) std::swap(good[0], good[1]);
      for (size_t g = 0; g < good_before; ++g, ++line) yaml += fmt::format("      {}\n", good[g]);
      const std::string indent(6, ' ');
      std::string key, text, message;
      switch (rng() % 4) {
        case 0: {
          const int64_t v = rng() % 2 ? 11 + int64_t(rng() % 100000) : -int64_t(rng() % 100000);
          key = "count", text = fmt::format("{}", v);
          message = fmt::format("parameter 'count' of stage 'test_every' must be between 1 and 10 (got {})", v);
          break;
        }
        case 1: {
          const double v = rng() % 2 ? 1.0 + std::ldexp(double(1 + rng() % 1000), -4) : -std::ldexp(double(1 + rng() % 1000), -4);
          key = "ratio", text = fmt::format("{}", v);
          message = fmt::format("parameter 'ratio' of stage 'test_every' must be between 0.0 and 1.0 (got {})", text);
          break;
        }
        case 2: {
          key = "flag", text = fmt::format("{}", rng() % 2);
          message = fmt::format("parameter 'flag' of stage 'test_every' must be a boolean, true or false (got '{}')", text);
          break;
        }
        default: {
          const size_t bad_item = rng() % 4;
          std::vector<std::string> items(4);
          for (size_t i = 0; i < 4; ++i) items[i] = i == bad_item ? "w" + random_word(rng) : fmt::format("{}", rng() % 5);
          key = "weights", text = "[";
          // 1-based column of the bad item: after the indent, "weights: [" and the items before it.
          size_t column = indent.size() + key.size() + 2 + 1 + 1;
          for (size_t i = 0; i < 4; ++i) {
            text += (i ? ", " : "") + items[i];
            if (i < bad_item) column += items[i].size() + 2;
          }
          text += "]";
          message = fmt::format(
              "{}:{}: error: item {} of parameter 'weights' of stage 'test_every' must be a number (got '{}')", line,
              column, bad_item + 1, items[bad_item]);
          break;
        }
      }
      yaml += indent + key + ": " + text + "\n";
      if (key == "weights") expected.push_back("random.yaml:" + message);
      else expected.push_back(fmt::format("random.yaml:{}:{}: error: {}", line, indent.size() + key.size() + 3, message));
      ++line;
    }
    SCOPED_TRACE(yaml);
    std::string joined;
    for (const std::string& e : expected) joined += (joined.empty() ? "" : "\n") + e;
    try {
      parse_config(yaml, "random.yaml");
      ADD_FAILURE() << "accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ExitCode::config);
      EXPECT_EQ(std::string(e.what()), joined);
    }
  }
}

}  // namespace
}  // namespace sp
