// set_param_from_text (preview --vary) against the config loader as the
// oracle: the same text as a value in a YAML config must give the same typed
// value, or the same error message after "error: ".
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "pipeline/config.h"
#include "pipeline/errors.h"
#include "pipeline/stage.h"

namespace sp {
namespace {

struct Outcome {
  std::optional<ParamValue> value;
  std::string error;  // the message after "error: "
};

std::string after_error(const std::string& message) {
  const size_t at = message.find("error: ");
  return at == std::string::npos ? message : message.substr(at + 7);
}

Outcome through_config(const std::string& param, const std::string& text) {
  try {
    const Config c = parse_config("pipeline:\n  - pencil: {" + param + ": " + text + "}\n", "c.yaml");
    return {c.stages.at(0).params.values().at(param), ""};
  } catch (const Error& e) {
    return {std::nullopt, after_error(e.what())};
  }
}

Outcome through_flag(const std::string& param, const std::string& text) {
  const Params defaults = default_params(StageRegistry::instance().find("pencil")->params);
  try {
    const Params p = set_param_from_text("pencil", defaults, param, text, "--vary pencil." + param + "=" + text);
    EXPECT_TRUE(p.given(param));
    return {p.values().at(param), ""};
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ExitCode::config);
    EXPECT_EQ(std::string(e.what()).rfind("--vary pencil." + param + "=" + text + ": error: ", 0), 0u) << e.what();
    EXPECT_EQ(std::string(e.what()).find('\n'), std::string::npos) << "one line: " << e.what();
    return {std::nullopt, after_error(e.what())};
  }
}

TEST(ConfigOverride, AgreesWithTheConfigLoaderOnValuesAndErrors) {
  ASSERT_NE(StageRegistry::instance().find("pencil"), nullptr);
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"line_length", "9"},        {"line_length", "3.5"},     {"line_length", "500"},
      {"line_length", "'9'"},      {"gamma_s", "0.5"},         {"gamma_s", "thick"},
      {"gamma_s", ".inf"},         {"color", "true"},          {"color", "yes please"},
      {"gradient", "l2"},          {"gradient", "l3"},         {"weights", "[1, 2, 3]"},
      {"weights", "[1, 2]"},       {"weights", "[1, -2, 3]"},  {"texture", "builtin"},
      {"tone", "dark"},            {"line_width", "~"},
  };
  int errors = 0;
  for (const auto& [param, text] : cases) {
    SCOPED_TRACE(param + "=" + text);
    const Outcome expected = through_config(param, text), got = through_flag(param, text);
    EXPECT_EQ(got.error, expected.error);
    EXPECT_EQ(got.value, expected.value);
    errors += !expected.error.empty();
  }
  EXPECT_GE(errors, 8);  // both paths are exercised, not only the happy one
}

TEST(ConfigOverride, UnknownStageAndParameterAreNamedWithASuggestion) {
  const Params none;
  try {
    set_param_from_text("pencl", none, "line_length", "5", "--vary pencl.line_length=5");
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()), "--vary pencl.line_length=5: error: stage 'pencl' is unknown (did you mean 'pencil'?)");
  }
  try {
    set_param_from_text("pencil", none, "gama_s", "5", "--vary pencil.gama_s=5");
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "--vary pencil.gama_s=5: error: stage 'pencil' has no parameter 'gama_s' (did you mean 'gamma_s'?)");
  }
}

}  // namespace
}  // namespace sp
