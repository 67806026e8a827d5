#pragma once
#include <CLI/CLI.hpp>

#include "orchestration/preview.h"

namespace sp::cli {

void add_preview_arguments(CLI::App& preview, PreviewRequest& request);
int cmd_preview(const PreviewRequest& request);

}  // namespace sp::cli
