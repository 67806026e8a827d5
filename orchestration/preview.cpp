#include "orchestration/preview.h"

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <filesystem>
#include <fstream>

#include "codecs/png_file.h"
#include "orchestration/contact_sheet.h"
#include "orchestration/preview_frames.h"
#include "orchestration/transcode.h"
#include "pipeline/device.h"
#include "pipeline/errors.h"
#include "pipeline/log.h"

namespace sp {
namespace {

void check_output(const PreviewRequest& r) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (r.output.empty()) throw Error(ExitCode::usage, "preview needs -o SHEET.png");
  if (fs::exists(r.output, ec) && !r.overwrite) throw Error(ExitCode::usage, r.output + ": exists; use -y to overwrite it");
  if (r.input == "-") throw Error(ExitCode::usage, "-i -: preview seeks in its input, so it reads a file, not stdin");
  if (fs::exists(r.output, ec) && fs::exists(r.input, ec) && fs::equivalent(r.input, r.output, ec))
    throw Error(ExitCode::usage, r.output + ": the output is the input file; write elsewhere");
}

nlohmann::json layout_json(const SheetLayout& layout, const PreviewFrames& frames, int warmup_frames) {
  nlohmann::json tiles = nlohmann::json::array();
  for (size_t r = 0; r < layout.rows.size(); ++r)
    for (size_t c = 0; c < layout.rows[r].size(); ++c) {
      const TileRect& t = layout.rows[r][c];
      tiles.push_back({{"row", r}, {"column", c}, {"x", t.x}, {"y", t.y}, {"width", t.width}, {"height", t.height},
                       {"label", t.label},
                       {"label_box", {{"x", t.cell_x}, {"y", t.label_y}, {"width", layout.cell_width},
                                      {"height", layout.label_height}}}});
    }
  return {{"width", layout.width}, {"height", layout.height}, {"frame_seconds", frames.target_seconds},
          {"warmup_frames", int(frames.warmup.size())}, {"warmup_frames_wanted", warmup_frames}, {"tiles", tiles}};
}

}  // namespace

int run_preview(const PreviewRequest& request) {
  // Every mistake in the flags and configs is reported before any decoding.
  const std::vector<std::vector<PreviewTile>> plan = plan_preview_tiles(request);
  check_output(request);
  const std::string font = find_label_font(request.font);
  // The most any tile's chain needs.
  Warmup warmup;
  for (const auto& row : plan)
    for (const PreviewTile& tile : row) {
      const Warmup w = warmup_of(tile.stages);
      warmup.frames = std::max(warmup.frames, w.frames);
      warmup.seconds = std::max(warmup.seconds, w.seconds);
    }

  const Choice backend_choice = select_backend(request.backend);
  const Backend backend = backend_choice.name == "cuda" ? Backend::cuda : Backend::cpu;
  if (backend == Backend::cuda) start_cuda_context();
  const PreviewFrames frames = decode_preview_frames(request.input, request.at_seconds, warmup);
  log_info("frame at {:.3f} s, after {} warm-up frame{}, on the {} backend", frames.target_seconds,
           frames.warmup.size(), frames.warmup.size() == 1 ? "" : "s", backend_choice.name);

  BufferPool pool;
  std::vector<std::vector<SheetTile>> rows;
  size_t tiles = 0;
  for (const auto& planned_row : plan) {
    std::vector<SheetTile> row;
    for (const PreviewTile& tile : planned_row) {
      log_debug("tile {}", tile.label);
      row.push_back({render_tile(tile.stages, frames, backend, pool), tile.label});
      ++tiles;
    }
    rows.push_back(std::move(row));
  }
  const SheetLayout layout = layout_sheet(rows);
  const FramePtr sheet = render_sheet(rows, layout, font);
  write_png(*sheet, request.output);
  if (!request.layout_json.empty()) {
    std::ofstream out(request.layout_json);
    out << layout_json(layout, frames, warmup.frames_at(frames.frame_rate)).dump(2) << "\n";
    if (!out) throw Error(ExitCode::io_error, request.layout_json + ": cannot write the layout");
  }
  log_info("{}: {}x{}, {} tiles", request.output, layout.width, layout.height, tiles);
  return 0;
}

}  // namespace sp
