// The parameter machinery and what is generated from the tables: Params
// accessors, `stylepipe stages` text/JSON/markdown, and a consistency check of
// the table of every stage linked into this binary.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "pipeline/config.h"
#include "pipeline/errors.h"
#include "pipeline/stage.h"
#include "pipeline/stage_docs.h"
#include "tests/config_test_stages.h"
#include "tests/e2e_util.h"

namespace sp {
namespace {

TEST(ParamsTest, AccessorsReturnTypedValuesAndRefuseMisuse) {
  Params p = default_params(test::every_type_table());
  EXPECT_EQ(p.values().size(), test::every_type_table().size());
  EXPECT_FALSE(p.get_bool("flag"));
  EXPECT_EQ(p.get_int("count"), 3);
  EXPECT_EQ(p.get_number("ratio"), 0.5);
  EXPECT_EQ(p.get_number("count"), 3.0);  // an integer reads as a number
  EXPECT_EQ(p.get_string("mode"), "fast");
  EXPECT_EQ(p.get_list("weights"), (std::vector<double>{1.0, 2.0}));
  for (const auto& [name, v] : p.values()) EXPECT_FALSE(p.given(name));

  auto expect_internal = [](auto&& read, const std::string& message) {
    try {
      read();
      ADD_FAILURE() << "no exception; expected: " << message;
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ExitCode::internal);
      EXPECT_EQ(std::string(e.what()), message);
    }
  };
  expect_internal([&] { p.get_int("ratio"); }, "parameter 'ratio' was read as an integer but holds a number (0.5)");
  expect_internal([&] { p.get_bool("count"); }, "parameter 'count' was read as a boolean but holds an integer (3)");
  expect_internal([&] { p.get_string("weights"); },
                  "parameter 'weights' was read as a string but holds a number list ([1.0, 2.0])");
  expect_internal([&] { p.get_list("label"); }, "parameter 'label' was read as a number list but holds a string (hello)");
  expect_internal([&] { p.get_number("flag"); }, "parameter 'flag' was read as a number but holds a boolean (false)");
  expect_internal([&] { p.get_int("nope"); },
                  "parameter 'nope' was read as an integer but is not in the stage's parameter table");
}

TEST(ParamsTest, FormatValue) {
  EXPECT_EQ(format_value(true), "true");
  EXPECT_EQ(format_value(int64_t(-42)), "-42");
  EXPECT_EQ(format_value(2.0), "2.0");  // a number never reads as an integer
  EXPECT_EQ(format_value(0.1), "0.1");  // shortest text that reads back exactly
  EXPECT_EQ(format_value(1e-7), "1e-07");
  EXPECT_EQ(format_value(std::string("bilinear")), "bilinear");
  EXPECT_EQ(format_value(std::vector<double>{1, -0.5}), "[1.0, -0.5]");
  EXPECT_EQ(format_value(std::vector<double>{}), "[]");
  EXPECT_STREQ(to_string(ParamType::boolean), "boolean");
  EXPECT_STREQ(to_string(ParamType::integer), "integer");
  EXPECT_STREQ(to_string(ParamType::number), "number");
  EXPECT_STREQ(to_string(ParamType::string), "string");
  EXPECT_STREQ(to_string(ParamType::choice), "choice");
  EXPECT_STREQ(to_string(ParamType::number_list), "number_list");
}

nlohmann::json value_json(const ParamValue& v) {
  return std::visit([](const auto& x) { return nlohmann::json(x); }, v);
}

TEST(StageDocsTest, SchemaListsEveryParameterOfTheTable) {
  test::register_config_test_stages();
  const nlohmann::json j = stages_schema_json();
  EXPECT_EQ(j.at("version"), 1);
  const auto& stages = j.at("stages");
  auto every = std::find_if(stages.begin(), stages.end(), [](const auto& s) { return s.at("name") == "test_every"; });
  ASSERT_NE(every, stages.end());
  EXPECT_EQ(every->at("summary"), "Config test stage with a parameter of every type.");
  const auto table = test::every_type_table();
  ASSERT_EQ(every->at("params").size(), table.size());
  for (size_t i = 0; i < table.size(); ++i) {
    const ParamSpec& spec = table[i];
    const nlohmann::json& p = every->at("params")[i];
    SCOPED_TRACE(spec.name);
    EXPECT_EQ(p.at("name"), spec.name);
    EXPECT_EQ(p.at("type"), to_string(spec.type));
    EXPECT_EQ(p.at("default"), value_json(spec.default_value));
    EXPECT_EQ(p.at("auto"), spec.optional_default);
    EXPECT_EQ(p.at("doc"), spec.doc);
    EXPECT_EQ(p.contains("min"), spec.min.has_value());
    if (spec.min) {
      EXPECT_EQ(p.at("min").get<double>(), *spec.min);
    }
    EXPECT_EQ(p.contains("max"), spec.max.has_value());
    if (spec.max) {
      EXPECT_EQ(p.at("max").get<double>(), *spec.max);
    }
    if (spec.type == ParamType::choice) EXPECT_EQ(p.at("choices"), spec.choices);
    else EXPECT_FALSE(p.contains("choices"));
  }
  // Integers stay integers in the schema (editors show 1, not 1.0).
  EXPECT_TRUE(every->at("params")[1].at("min").is_number_integer());
  EXPECT_TRUE(every->at("params")[2].at("min").is_number_float());

  std::vector<std::string> output_fields, settings_fields;
  for (const auto& f : j.at("output")) output_fields.push_back(f.at("name"));
  for (const auto& f : j.at("settings")) settings_fields.push_back(f.at("name"));
  EXPECT_EQ(output_fields, (std::vector<std::string>{"codec", "crf", "preset", "pixel_format", "format"}));
  EXPECT_EQ(settings_fields, (std::vector<std::string>{"frames_in_flight", "queue_depth"}));
}

TEST(StageDocsTest, ConfigJsonSchemaDescribesTheFileShape) {
  test::register_config_test_stages();
  const nlohmann::json s = config_json_schema();
  EXPECT_EQ(stages_schema_json().at("config_schema"), s);
  EXPECT_EQ(s.at("$schema"), "http://json-schema.org/draft-07/schema#");
  EXPECT_EQ(s.at("type"), "object");
  EXPECT_EQ(s.at("required"), nlohmann::json::array({"pipeline"}));
  EXPECT_EQ(s.at("additionalProperties"), false);
  const auto& pipeline = s.at("properties").at("pipeline");
  EXPECT_EQ(pipeline.at("type"), "array");
  EXPECT_EQ(pipeline.at("minItems"), 1);
  const auto& entry = pipeline.at("items");
  EXPECT_EQ(entry.at("minProperties"), 1);
  EXPECT_EQ(entry.at("maxProperties"), 1);
  EXPECT_EQ(entry.at("additionalProperties"), false);
  EXPECT_EQ(entry.at("properties").size(), StageRegistry::instance().all().size());
  const auto& params = entry.at("properties").at("test_every");
  EXPECT_EQ(params.at("type"), nlohmann::json::array({"object", "null"}));  // `test_every:` means all defaults
  EXPECT_EQ(params.at("additionalProperties"), false);
  const auto& props = params.at("properties");
  EXPECT_EQ(props.at("flag").at("type"), "boolean");
  EXPECT_EQ(props.at("count").at("type"), "integer");
  EXPECT_EQ(props.at("count").at("minimum"), 1);
  EXPECT_EQ(props.at("count").at("maximum"), 10);
  EXPECT_EQ(props.at("count").at("default"), 3);
  EXPECT_EQ(props.at("count").at("description"), "How many.");
  EXPECT_EQ(props.at("ratio").at("type"), "number");
  // The loader reads any scalar as text: `label: 42` is the label "42".
  EXPECT_EQ(props.at("label").at("type"), nlohmann::json::array({"string", "number", "boolean"}));
  EXPECT_EQ(props.at("mode").at("enum"), nlohmann::json::array({"fast", "slow", "careful"}));
  EXPECT_EQ(props.at("weights").at("type"), "array");
  EXPECT_EQ(props.at("weights").at("items").at("minimum"), -5.0);
  // An "auto" parameter takes null, which is also its default (0 is below its minimum).
  EXPECT_EQ(props.at("width").at("type"), nlohmann::json::array({"integer", "null"}));
  EXPECT_TRUE(props.at("width").at("default").is_null());
  EXPECT_EQ(props.at("gain").at("default"), 1.0);
  EXPECT_FALSE(props.at("gain").contains("minimum"));
  EXPECT_EQ(s.at("properties").at("output").at("properties").at("crf").at("maximum"), 51);
  EXPECT_EQ(s.at("properties").at("settings").at("properties").at("frames_in_flight").at("maximum"), 16);

  // What the schema cannot check is listed by name, for the whole file and per stage.
  const std::string rule = "- test_every.count_above_5_needs_slow_mode: count above 5 needs mode slow or careful.\n";
  EXPECT_NE(s.at("description").get<std::string>().find(rule), std::string::npos) << s.at("description");
  EXPECT_NE(params.at("description").get<std::string>().find(rule), std::string::npos) << params.at("description");
  EXPECT_NE(s.at("description").get<std::string>().find("- output.ffmpeg_names: "), std::string::npos);
  EXPECT_EQ(entry.at("properties").at("test_empty").at("description"), "Config test stage without parameters.");
}

// The lines of `text` that start (after spaces) with `name` followed by a space.
std::vector<std::string> rows_named(const std::string& text, const std::string& name) {
  std::vector<std::string> rows;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    const size_t start = line.find_first_not_of(' ');
    if (start != std::string::npos && line.compare(start, name.size() + 1, name + " ") == 0) rows.push_back(line);
  }
  return rows;
}

TEST(StageDocsTest, TextAndMarkdownShowEveryParameter) {
  test::register_config_test_stages();
  const std::string text = stages_text(), markdown = stages_markdown();
  EXPECT_NE(text.find("test_every: Config test stage with a parameter of every type.\n"), std::string::npos);
  EXPECT_NE(markdown.find("### `test_every`\n\nConfig test stage with a parameter of every type.\n"), std::string::npos);
  EXPECT_NE(text.find("test_empty: Config test stage without parameters.\n    (no parameters)\n"), std::string::npos);
  struct Row {
    const char* name;
    std::vector<std::string> cells;  // type, default, range or choices, doc
    const char* markdown_row;
  };
  const Row rows[] = {
      {"flag", {"boolean", "false", "true|false", "A switch."}, "| `flag` | boolean | false | true\\|false | A switch. |"},
      {"count", {"integer", "3", "1..10", "How many."}, "| `count` | integer | 3 | 1 .. 10 | How many. |"},
      {"ratio", {"number", "0.5", "0.0..1.0", "A fraction."}, "| `ratio` | number | 0.5 | 0.0 .. 1.0 | A fraction. |"},
      {"label", {"string", "hello", "Free text."}, "| `label` | string | hello |  | Free text. |"},
      {"mode", {"choice", "fast", "fast|slow|careful", "How to go."},
       "| `mode` | choice | fast | fast\\|slow\\|careful | How to go. |"},
      {"weights", {"number_list", "[1.0, 2.0]", "numbers in -5.0..5.0", "Per-channel weights."},
       "| `weights` | number_list | [1.0, 2.0] | numbers in -5.0 .. 5.0 | Per-channel weights. |"},
      {"width", {"integer", "auto", "1..16384", "Output width; default: the input's."},
       "| `width` | integer | auto | 1 .. 16384 | Output width; default: the input's. |"},
      {"gain", {"number", "1.0", "Unbounded factor."}, "| `gain` | number | 1.0 |  | Unbounded factor. |"},
  };
  const size_t every_at = text.find("test_every:");
  for (const Row& r : rows) {
    SCOPED_TRACE(r.name);
    // The text row of this stage: the first row with the name after the stage's header.
    const auto candidates = rows_named(text.substr(every_at), r.name);
    ASSERT_FALSE(candidates.empty());
    std::string row_text = candidates[0];
    size_t at = row_text.find(r.name) + std::string(r.name).size();
    for (const std::string& cell : r.cells) {
      const size_t found = row_text.find(cell, at);
      ASSERT_NE(found, std::string::npos) << "'" << cell << "' in: " << row_text;
      at = found + cell.size();
    }
    EXPECT_NE(markdown.find(std::string(r.markdown_row) + "\n"), std::string::npos);
  }
  // The rules beyond the table, named as in the schema.
  EXPECT_NE(text.find("    also checked: test_every.label_not_refuse: label is not 'refuse'.\n"), std::string::npos);
  EXPECT_NE(markdown.find("- `test_every.label_not_refuse`: label is not 'refuse'.\n"), std::string::npos);
  EXPECT_EQ(text.find("also checked: test_empty."), std::string::npos);
}

// Every stage linked into this binary (the real ones included): its table is
// consistent, its defaults pass its own check, and `{}` configures it.
TEST(StageDocsTest, EveryRegisteredTableIsConsistent) {
  test::register_config_test_stages();
  for (const StageDescriptor* d : StageRegistry::instance().all()) {
    SCOPED_TRACE("stage " + d->name);
    EXPECT_FALSE(d->summary.empty());
    EXPECT_TRUE(d->create) << "no create function";
    std::set<std::string> names;
    for (const ParamSpec& p : d->params) {
      SCOPED_TRACE("parameter " + p.name);
      EXPECT_TRUE(names.insert(p.name).second) << "declared twice";
      EXPECT_FALSE(p.doc.empty());
      EXPECT_FALSE(p.name.empty());
      EXPECT_TRUE(std::all_of(p.name.begin(), p.name.end(), [](char c) { return std::islower((unsigned char)c) || std::isdigit((unsigned char)c) || c == '_'; }))
          << "names are lower_snake_case";
      const size_t expected_index[] = {0, 1, 2, 3, 3, 4};  // variant alternative of each ParamType
      EXPECT_EQ(p.default_value.index(), expected_index[int(p.type)]) << "default has the wrong type";
      if (p.min && p.max) {
        EXPECT_LE(*p.min, *p.max);
      }
      if (p.type == ParamType::choice) {
        EXPECT_FALSE(p.choices.empty());
        if (p.default_value.index() == 3) {
          EXPECT_NE(std::find(p.choices.begin(), p.choices.end(), std::get<std::string>(p.default_value)),
                    p.choices.end())
              << "default is not one of the choices";
        }
      } else {
        EXPECT_TRUE(p.choices.empty()) << "choices on a non-choice parameter";
      }
      if (!p.optional_default && (p.type == ParamType::integer || p.type == ParamType::number)) {
        const double v = p.type == ParamType::integer && p.default_value.index() == 1
                             ? double(std::get<int64_t>(p.default_value))
                             : p.default_value.index() == 2 ? std::get<double>(p.default_value) : 0.0;
        if (p.min) {
          EXPECT_GE(v, *p.min) << "default below the minimum";
        }
        if (p.max) {
          EXPECT_LE(v, *p.max) << "default above the maximum";
        }
      }
    }
    // The rules are what the schema says it does not check: a validate
    // function without them would check what no editor is told about.
    EXPECT_EQ(bool(d->validate), !d->rules.empty()) << "a validate function lists its rules, and only it";
    std::set<std::string> rule_names;
    for (const ParamRule& r : d->rules) {
      EXPECT_TRUE(rule_names.insert(r.name).second) << "rule " << r.name << " declared twice";
      EXPECT_FALSE(r.text.empty()) << r.name;
      EXPECT_TRUE(!r.name.empty() && std::all_of(r.name.begin(), r.name.end(), [](char c) {
        return std::islower((unsigned char)c) || std::isdigit((unsigned char)c) || c == '_';
      })) << "rule names are lower_snake_case: " << r.name;
    }
    if (d->validate) {
      const auto problem = d->validate(default_params(d->params));
      EXPECT_FALSE(problem.has_value()) << "defaults fail the stage's own check: " << problem.value_or("");
    }
    if (d->create) {
      EXPECT_NE(d->create(default_params(d->params)), nullptr) << "create() with the defaults";
    }
    try {
      const Config c = parse_config("pipeline:\n  - " + d->name + ": {}\n", "defaults.yaml");
      ASSERT_EQ(c.stages.size(), 1u);
      EXPECT_EQ(c.stages[0].params.values(), default_params(d->params).values());
    } catch (const Error& e) {
      ADD_FAILURE() << e.what();
    }
  }
}

// README's stage reference is what `stylepipe stages --markdown` prints: a
// default or a doc line changed in a table shows here until it is pasted in.
TEST(StageDocsTest, ReadmeStageReferenceIsTheGeneratedOne) {
  const test::CommandResult generated = test::run_command(test::shell_quote(test::stylepipe_binary()) + " stages --markdown");
  ASSERT_EQ(generated.exit_code, 0) << generated.output;
  for (const auto& folder : std::filesystem::directory_iterator(test::source_dir() + "/stages"))
    if (generated.output.find("### `" + folder.path().filename().string() + "`") == std::string::npos)
      GTEST_SKIP() << "this build leaves out the stage " << folder.path().filename() << " (STYLEPIPE_EXCLUDE_STAGES)";
  std::ifstream in(test::source_dir() + "/README.md");
  const std::string readme{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
  EXPECT_NE(readme.find(generated.output), std::string::npos)
      << "README.md's stage reference differs from `stylepipe stages --markdown`: paste that output in";
}

}  // namespace
}  // namespace sp
