// A plan of several segments names, once, each stage whose state no warm-up
// brings back (halftone's dots without a handover, lowpoly's kept vertices
// without a refresh), with the config's line; stages whose state warm-up or a
// handover recovers are not named.
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <fstream>
#include <random>
#include <vector>

#include "tests/e2e_util.h"
#include "tests/support/test_support.h"

namespace sp::test {
namespace {

struct Case {
  std::string stage_line;  // the config's second line
  std::string named;       // in the notice; empty: no notice
};

std::string write_config(const TempDir& dir, const std::string& name, const std::string& stage_line) {
  const std::string path = dir.file(name);
  std::ofstream(path) << "pipeline:\n" << stage_line << "\n";
  return path;
}

std::string make_clip(const TempDir& dir, std::mt19937_64& rng) {
  const std::string path = dir.file("in.mp4");
  const int gop = 5 + int(rng() % 10);
  const CommandResult r = run_command(fmt::format(
      "ffmpeg -hide_banner -v error -y -f lavfi -i testsrc2=size=96x64:rate=25 -t 3 -ss {} -c:v libx264 -g {} "
      "-pix_fmt yuv420p {}", rng() % 40, gop, shell_quote(path)));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  return path;
}

TEST(SeamNotice, PlanNamesTheStagesWhoseStateRestartsAtSeams) {
  std::mt19937_64 rng(fresh_seed());
  TempDir dir;
  const std::string in = make_clip(dir, rng);
  const std::vector<Case> cases = {
      {"  - halftone: {dots_per_pixel: 0.2, seam_seconds: 0}", "halftone: the dot arrangement"},
      {"  - halftone: {dots_per_pixel: 0.2}", ""},  // handed over at each seam
      {"  - lowpoly: {temporal: true, refresh_seconds: 0}", "lowpoly: the kept vertices"},
      {"  - lowpoly: {temporal: true}", ""},  // refreshed every 2 s: a warm-up rebuilds the vertices
      {"  - lowpoly: {color_smoothing: 0.5}", ""},
      {"  - pencil: {temporal_smoothing: 0.8}", ""},
  };
  for (size_t i = 0; i < cases.size(); ++i) {
    const Case& c = cases[i];
    SCOPED_TRACE(c.stage_line);
    const std::string config = write_config(dir, fmt::format("c{}.yaml", i), c.stage_line);
    const int segments = 2 + int(rng() % 2);
    const auto plan = [&](int n) {
      return stylepipe(fmt::format("plan {} -i {} -o {} --backend cpu --segments {} --workdir {}", config,
                                   shell_quote(in), shell_quote(dir.file(fmt::format("o{}_{}.mkv", i, n))), n,
                                   shell_quote(dir.file(fmt::format("w{}_{}", i, n)))));
    };
    CommandResult r = plan(segments);
    ASSERT_EQ(r.exit_code, 0) << r.output;
    const bool said = r.output.find("restarts at") != std::string::npos;
    EXPECT_EQ(said, !c.named.empty()) << r.output;
    if (!c.named.empty()) {
      EXPECT_NE(r.output.find(config + ":2: " + c.named), std::string::npos) << r.output;
      const std::string where = segments == 2 ? "at the seam" : fmt::format("at each of the {} seams", segments - 1);
      EXPECT_NE(r.output.find(where), std::string::npos) << r.output;
    }
    r = plan(1);
    ASSERT_EQ(r.exit_code, 0) << r.output;
    EXPECT_EQ(r.output.find("restarts at"), std::string::npos) << "one segment has no seam: " << r.output;
  }
}

}  // namespace
}  // namespace sp::test
