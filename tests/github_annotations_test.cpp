// `stylepipe validate --format github`: workflow commands that GitHub Actions
// turns into annotations on the config, escaped as its runner reads them.
#include "cli/github_annotations.h"

#include <gtest/gtest.h>

#include <fstream>

#include "tests/e2e_util.h"

namespace sp::cli {
namespace {

TEST(GithubAnnotationsTest, EscapesDataAndPropertiesAsTheRunnerReadsThem) {
  EXPECT_EQ(escape_command_data("50% done\r\nnext: a, b"), "50%25 done%0D%0Anext: a, b");
  EXPECT_EQ(escape_command_property("C:\\cfg,v2%.yaml\n"), "C%3A\\cfg%2Cv2%25.yaml%0A");
  EXPECT_EQ(github_annotation("a.yaml", stylepipe::ConfigProblem{3, 7, "", "x"}, "bad: 100%"),
            "::error file=a.yaml,line=3,col=7::bad: 100%25\n");
  EXPECT_EQ(github_annotation("a,b.yaml", std::nullopt, "cannot open config"),
            "::error file=a%2Cb.yaml::cannot open config\n");
}

// A config with a problem at a known place, in a file whose name needs escaping.
TEST(GithubAnnotationsTest, ValidatePrintsOneAnnotationPerProblemAtItsLineAndColumn) {
  test::TempDir dir;
  const std::string path = dir.file("ci,check.yaml");
  std::ofstream(path) << "# yaml-language-server: $schema=./stylepipe.schema.json\n"
                         "pipeline:\n"
                         "  - pencl: {}\n"
                         "  - scale: {factor: 0.5, width: 100}\n"
                         "  - xbr: {scale: 9%}\n";
  const test::CommandResult r =
      test::run_command(std::string("(") + test::shell_quote(test::stylepipe_binary()) + " validate --format github " +
                        test::shell_quote(path) + " 2>/dev/null)");
  EXPECT_EQ(r.exit_code, 78);
  const std::string file = escape_command_property(path);
  EXPECT_EQ(r.output,
            "::error file=" + file + ",line=3,col=5::stage 'pencl' is unknown (did you mean 'pencil'?)\n"
            "::error file=" + file + ",line=4,col=21::stage 'scale': factor cannot be combined with width or "
            "height: give either factor or an output size\n"
            "::error file=" + file + ",line=5,col=18::parameter 'scale' of stage 'xbr' must be an integer (got "
            "'9%25')\n");
  EXPECT_NE(file.find("ci%2Ccheck.yaml"), std::string::npos);
}

TEST(GithubAnnotationsTest, ValidateAnnotatesAMissingConfigWithoutAPosition) {
  const test::CommandResult r = test::run_command(std::string("(") + test::shell_quote(test::stylepipe_binary()) +
                                                  " validate --format github /nonexistent/x.yaml 2>/dev/null)");
  EXPECT_EQ(r.exit_code, 66);
  EXPECT_EQ(r.output, "::error file=/nonexistent/x.yaml::cannot open config (No such file or directory)\n");
}

// Several configs in one call, as a CI step gives them: each is reported.
TEST(GithubAnnotationsTest, TextFormatReportsEveryConfigOnStderr) {
  test::TempDir dir;
  const std::string bad = dir.file("bad.yaml"), good = dir.file("good.yaml");
  std::ofstream(bad) << "pipeline:\n  - pencl: {}\n";
  std::ofstream(good) << "pipeline:\n  - scale: {factor: 2}\n";
  const std::string command = test::shell_quote(test::stylepipe_binary()) + " validate " + test::shell_quote(bad) +
                              " " + test::shell_quote(good);
  // run_command adds 2>&1 after the command: the subshell keeps the streams apart.
  const test::CommandResult errors = test::run_command("(" + command + " 2>&1 >/dev/null)");
  EXPECT_EQ(errors.exit_code, 78);
  EXPECT_EQ(errors.output, bad + ":2:5: error: stage 'pencl' is unknown (did you mean 'pencil'?)\n");
  const test::CommandResult out = test::run_command("(" + command + " 2>/dev/null)");
  EXPECT_EQ(out.output, good + ": ok (1 stage)\n");
}

}  // namespace
}  // namespace sp::cli
