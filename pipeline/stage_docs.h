#pragma once
#include <nlohmann/json.hpp>

#include <string>

namespace sp {

// Everything below is generated from the stages' parameter tables (and the
// tables of the `output:` and `settings:` config sections), never written by hand.

// `stylepipe stages`: every stage, its summary, then one line per parameter:
// name, type, default, range or choices, doc.
std::string stages_text();

// `stylepipe stages --json`:
//   {"version": 1,
//    "stages": [{"name", "summary", "params": [{"name", "type", "default", "auto",
//                 "min"?, "max"?, "choices"?, "doc"}]}],
//    "output": [fields as params], "settings": [fields as params],
//    "config_schema": config_json_schema()}
nlohmann::json stages_schema_json();

// `stylepipe schema`: a JSON Schema (draft-07) of a whole config file, so
// editors can check and complete configs as they are written. Its
// description lists, by name, the stages' rules beyond their tables, which
// only `stylepipe validate` checks.
nlohmann::json config_json_schema();

// `stylepipe stages --markdown`: the README's stage reference (a section per
// stage with a parameter table, then the `output:` and `settings:` fields).
std::string stages_markdown();

}  // namespace sp
