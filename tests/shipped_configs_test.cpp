// Every config shipped in configs/ validates against the stages linked into
// this binary, so the examples in the README keep working as tables change.
#include <gtest/gtest.h>
#include <yaml-cpp/yaml.h>

#include <filesystem>
#include <fstream>

#include "pipeline/config.h"
#include "pipeline/errors.h"
#include "pipeline/stage.h"

#ifndef STYLEPIPE_SOURCE_DIR
#define STYLEPIPE_SOURCE_DIR "."
#endif

namespace sp {
namespace {

// Stages a config names that this build does not register (a partial build).
std::vector<std::string> unregistered_stages(const std::string& path) {
  std::vector<std::string> missing;
  YAML::Node pipeline;
  try {
    pipeline = YAML::LoadFile(path)["pipeline"];
  } catch (const YAML::Exception&) {
    return missing;  // load_config reports it
  }
  if (!pipeline.IsSequence()) return missing;
  for (const YAML::Node& entry : pipeline)
    if (entry.IsMap())
      for (auto it = entry.begin(); it != entry.end(); ++it)
        if (it->first.IsScalar() && !StageRegistry::instance().find(it->first.Scalar()))
          missing.push_back(it->first.Scalar());
  return missing;
}

// Editors with yaml-language-server find the schema through the first line;
// a path that does not resolve leaves the config unchecked without a word.
TEST(ShippedConfigsTest, EveryConfigNamesTheSchemaOnItsFirstLine) {
  const std::filesystem::path root = std::filesystem::path(STYLEPIPE_SOURCE_DIR) / "configs";
  const std::filesystem::path schema = root / "stylepipe.schema.json";
  ASSERT_TRUE(std::filesystem::is_regular_file(schema)) << schema;
  const std::string prefix = "# yaml-language-server: $schema=";
  int checked = 0;
  for (const auto& file : std::filesystem::recursive_directory_iterator(root)) {
    if (file.path().extension() != ".yaml") continue;
    SCOPED_TRACE(file.path().string());
    std::ifstream in(file.path());
    std::string first_line;
    std::getline(in, first_line);
    ASSERT_EQ(first_line.rfind(prefix, 0), 0u) << "first line: " << first_line;
    const std::filesystem::path named = file.path().parent_path() / first_line.substr(prefix.size());
    EXPECT_TRUE(std::filesystem::exists(named) && std::filesystem::equivalent(named, schema))
        << first_line << " does not lead to " << schema;
    ++checked;
  }
  EXPECT_GT(checked, 0);
}

TEST(ShippedConfigsTest, EveryConfigUnderConfigsValidates) {
  const std::filesystem::path root = std::filesystem::path(STYLEPIPE_SOURCE_DIR) / "configs";
  ASSERT_TRUE(std::filesystem::is_directory(root)) << root;
  std::vector<std::string> skipped;
  int checked = 0;
  for (const auto& file : std::filesystem::recursive_directory_iterator(root)) {
    if (file.path().extension() != ".yaml") continue;
    const std::string path = file.path().string();
    if (auto missing = unregistered_stages(path); !missing.empty()) {
      skipped.push_back(path + " (needs stage '" + missing[0] + "')");
      continue;
    }
    try {
      const Config c = load_config(path);
      EXPECT_FALSE(c.stages.empty()) << path;
      ++checked;
    } catch (const Error& e) {
      ADD_FAILURE() << e.what();
    }
  }
  if (!skipped.empty()) {
    std::string list;
    for (const std::string& s : skipped) list += "\n  " + s;
    GTEST_SKIP() << checked << " configs valid; not checked, their stages are not in this build:" << list;
  }
  EXPECT_GT(checked, 0);
}

}  // namespace
}  // namespace sp
