#include "cli/preview_command.h"

#include "pipeline/device.h"
#include "pipeline/errors.h"

namespace sp::cli {

void add_preview_arguments(CLI::App& preview, PreviewRequest& r) {
  preview.add_option("config", r.config_path, "YAML config")->required();
  preview.add_option("-i,--input", r.input, "Input video or picture")->required();
  preview.add_option("-o,--output", r.output, "The contact sheet, a PNG file")->required();
  preview.add_option("--at", r.at_seconds, "Show the first frame at or after this time in seconds (default 0)")
      ->check(CLI::NonNegativeNumber);
  preview.add_option("--vary", r.variations,
                     "STAGE.PARAM=V1,V2,...: a row with one tile per value (repeatable; e.g. pencil.line_length=5,10,20)")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  preview.add_option("--config", r.extra_configs, "Another config: one more tile in the first row (repeatable)")
      ->expected(1)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  preview.add_option("--backend", r.backend, "auto|cuda|cpu")->check(CLI::IsMember({"auto", "cuda", "cpu"}));
  preview.add_option("--font", r.font, "Font file of the labels (default: fontconfig's sans-serif)");
  preview.add_option("--layout-json", r.layout_json, "Also write each tile's rectangle and label as JSON");
  preview.add_flag("-y,--overwrite", r.overwrite, "Overwrite an existing sheet");
}

int cmd_preview(const PreviewRequest& request) {
  const int code = run_preview(request);
  release_cuda_context();
  return code;
}

}  // namespace sp::cli
