#include "api/public_errors.h"

#include <regex>

#include "pipeline/config.h"
#include "pipeline/errors.h"

namespace stylepipe {

ConfigError::ConfigError(std::string file, std::vector<ConfigProblem> problems, const std::string& rendered)
    : Error(ExitCode::config, rendered), file_(std::move(file)), problems_(std::move(problems)) {}

namespace detail {
namespace {

// The loader words its messages after the thing at fault ("parameter
// 'line_length' of stage 'pencil'", "field 'codec' of 'output'"): the field
// is read back from those words, so that every message keeps one wording.
std::string field_of(const std::string& message) {
  static const std::regex owned(R"((?:parameter|field) '([^']+)' of (?:stage )?'([^']+)')");
  static const std::regex missing(R"(stage '([^']+)' has no parameter '([^']+)')");
  static const std::regex stage(R"(stage '([^']+)')");
  static const std::regex section(R"('(pipeline|output|settings)')");
  std::smatch m;
  if (std::regex_search(message, m, owned)) return m[2].str() + "." + m[1].str();
  if (std::regex_search(message, m, missing)) return m[1].str() + "." + m[2].str();
  if (std::regex_search(message, m, stage)) return m[1].str();
  if (std::regex_search(message, m, section)) return m[1].str();
  return {};
}

ExitCode public_code(sp::ExitCode code) { return static_cast<ExitCode>(static_cast<int>(code)); }

}  // namespace

void rethrow_as_public() {
  try {
    throw;
  } catch (const Error&) {
    throw;
  } catch (const sp::ConfigErrors& e) {
    std::vector<ConfigProblem> problems;
    for (const sp::ConfigProblem& p : e.problems()) problems.push_back({p.line, p.column, field_of(p.message), p.message});
    throw ConfigError(e.path(), std::move(problems), e.what());
  } catch (const sp::Error& e) {
    switch (e.code()) {
      case sp::ExitCode::no_input:
      case sp::ExitCode::data_error:
      case sp::ExitCode::io_error:
        throw MediaError(public_code(e.code()), e.what());
      case sp::ExitCode::unavailable:
        throw DeviceError(public_code(e.code()), e.what());
      case sp::ExitCode::config:
        throw ConfigError("", {{1, 1, field_of(e.what()), e.what()}}, e.what());
      default:
        throw Error(public_code(e.code()), e.what());
    }
  } catch (const std::bad_alloc&) {
    throw;
  } catch (const std::exception& e) {
    throw Error(ExitCode::internal, std::string("internal error: ") + e.what());
  }
}

}  // namespace detail
}  // namespace stylepipe
