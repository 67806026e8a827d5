// The contact sheet's picture: one libavfilter graph, options set one by one
// (av_opt_set takes the raw label text: no filtergraph escaping to get wrong).
//   buffer -> pad (the tile's cell) -> drawtext (its label) -> xstack input 0
//   buffer -> pad -> drawtext -> xstack input 1, ...
//   xstack -> pad (margins) -> format=rgb24 -> buffersink
#include "orchestration/contact_sheet.h"

#include <fmt/format.h>

#include <cstring>
#include <map>

#include "pipeline/errors.h"

extern "C" {
#include <libavfilter/avfilter.h>
#include <libavfilter/buffersink.h>
#include <libavfilter/buffersrc.h>
#include <libavutil/opt.h>
}

namespace sp {
namespace {

constexpr const char* kBackground = "0xd8d8d8";
constexpr const char* kLabelColour = "black";

struct GraphDeleter {
  void operator()(AVFilterGraph* g) const { avfilter_graph_free(&g); }
};
using GraphPtr = std::unique_ptr<AVFilterGraph, GraphDeleter>;

void check(int r, const std::string& what) {
  if (r < 0) throw Error(ExitCode::internal, "contact sheet: " + what + ": " + av_error_text(r));
}

AVFilterContext* add_filter(AVFilterGraph* graph, const char* filter, const std::string& name,
                            const std::map<std::string, std::string>& options) {
  const AVFilter* f = avfilter_get_by_name(filter);
  if (!f) throw Error(ExitCode::unavailable, fmt::format("this FFmpeg's libavfilter has no '{}' filter", filter));
  AVFilterContext* ctx = avfilter_graph_alloc_filter(graph, f, name.c_str());
  if (!ctx) throw Error(ExitCode::internal, "contact sheet: cannot allocate " + name);
  for (const auto& [key, value] : options)
    check(av_opt_set(ctx, key.c_str(), value.c_str(), AV_OPT_SEARCH_CHILDREN), name + " option " + key);
  check(avfilter_init_str(ctx, nullptr), "initializing " + name);
  return ctx;
}

FramePtr rgba_frame(const RgbaImage& image) {
  FramePtr frame = make_frame();
  frame->format = AV_PIX_FMT_RGBA;
  frame->width = image.width;
  frame->height = image.height;
  frame->pts = 0;
  check(av_frame_get_buffer(frame.get(), 0), "tile buffer");
  for (int y = 0; y < image.height; ++y)
    std::memcpy(frame->data[0] + size_t(y) * frame->linesize[0], image.pixels.data() + size_t(y) * image.width * 4,
                size_t(image.width) * 4);
  return frame;
}

}  // namespace

FramePtr render_sheet(const std::vector<std::vector<SheetTile>>& rows, const SheetLayout& layout,
                      const std::string& font_file) {
  GraphPtr graph(avfilter_graph_alloc());
  std::vector<AVFilterContext*> sources;
  std::vector<AVFilterContext*> cells;
  std::vector<const RgbaImage*> images;
  std::string positions;
  const int cell_height = layout.picture_height + layout.label_height;
  for (size_t r = 0; r < rows.size(); ++r)
    for (size_t c = 0; c < rows[r].size(); ++c) {
      const SheetTile& tile = rows[r][c];
      const TileRect& rect = layout.rows[r][c];
      const std::string id = fmt::format("{}_{}", r, c);
      const int cell_x = rect.cell_x, cell_y = rect.cell_y;
      AVFilterContext* src = add_filter(graph.get(), "buffer", "tile" + id,
                                        {{"video_size", fmt::format("{}x{}", tile.image.width, tile.image.height)},
                                         {"pix_fmt", "rgba"}, {"time_base", "1/1"}, {"pixel_aspect", "1/1"}});
      AVFilterContext* pad = add_filter(graph.get(), "pad", "cell" + id,
                                        {{"width", std::to_string(layout.cell_width)},
                                         {"height", std::to_string(cell_height)},
                                         {"x", std::to_string(rect.x - cell_x)},
                                         {"y", std::to_string(rect.y - cell_y)},
                                         {"color", kBackground}});
      AVFilterContext* text = add_filter(graph.get(), "drawtext", "label" + id,
                                         {{"fontfile", font_file}, {"text", tile.label}, {"expansion", "none"},
                                          {"fontsize", std::to_string(layout.font_size)},
                                          {"fontcolor", kLabelColour}, {"x", "(w-text_w)/2"},
                                          {"y", std::to_string(layout.picture_height + layout.font_size / 2)}});
      check(avfilter_link(src, 0, pad, 0), "linking " + id);
      check(avfilter_link(pad, 0, text, 0), "linking " + id);
      sources.push_back(src);
      cells.push_back(text);
      images.push_back(&tile.image);
      positions += fmt::format("{}{}_{}", positions.empty() ? "" : "|", cell_x, cell_y);
    }
  if (cells.size() < 2) throw Error(ExitCode::internal, "contact sheet: xstack needs two tiles or more");
  AVFilterContext* stack = add_filter(graph.get(), "xstack", "grid",
                                      {{"inputs", std::to_string(cells.size())}, {"layout", positions},
                                       {"fill", kBackground}});
  for (size_t i = 0; i < cells.size(); ++i) check(avfilter_link(cells[i], 0, stack, unsigned(i)), "linking the grid");
  AVFilterContext* margins = add_filter(graph.get(), "pad", "margins",
                                        {{"width", std::to_string(layout.width)},
                                         {"height", std::to_string(layout.height)}, {"color", kBackground}});
  AVFilterContext* format = add_filter(graph.get(), "format", "rgb", {{"pix_fmts", "rgb24"}});
  AVFilterContext* sink = add_filter(graph.get(), "buffersink", "sheet", {});
  check(avfilter_link(stack, 0, margins, 0), "linking the margins");
  check(avfilter_link(margins, 0, format, 0), "linking the format");
  check(avfilter_link(format, 0, sink, 0), "linking the sink");
  check(avfilter_graph_config(graph.get(), nullptr), "configuring the graph");

  for (size_t i = 0; i < sources.size(); ++i) {
    FramePtr frame = rgba_frame(*images[i]);
    check(av_buffersrc_add_frame(sources[i], frame.get()), "feeding a tile");
    check(av_buffersrc_add_frame(sources[i], nullptr), "ending a tile");
  }
  FramePtr sheet = make_frame();
  check(av_buffersink_get_frame(sink, sheet.get()), "taking the sheet");
  if (sheet->width != layout.width || sheet->height != layout.height)
    throw Error(ExitCode::internal, fmt::format("contact sheet: libavfilter made {}x{}, the layout says {}x{}",
                                                sheet->width, sheet->height, layout.width, layout.height));
  return sheet;
}

}  // namespace sp
