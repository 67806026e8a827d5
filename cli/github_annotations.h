#pragma once
// GitHub Actions workflow commands for config problems, so that a CI job
// running `stylepipe validate --format github` annotates the config file:
//   ::error file=configs/x.yaml,line=7,col=5::stage 'pencl' is unknown (...)
// (https://docs.github.com/actions/reference/workflow-commands-for-github-actions)
#include <optional>
#include <string>

#include "stylepipe/errors.h"

namespace sp::cli {

// The message part of a workflow command: '%', CR and LF escaped.
std::string escape_command_data(const std::string& text);
// A property value (file=...): also ':' and ',', which end the property.
std::string escape_command_property(const std::string& text);

// One `::error file=...[,line=...,col=...]::message` line, '\n'-terminated.
std::string github_annotation(const std::string& file, std::optional<stylepipe::ConfigProblem> at, const std::string& message);

// One line per problem of `errors`, in file order.
std::string github_annotations(const stylepipe::ConfigError& errors);

}  // namespace sp::cli
