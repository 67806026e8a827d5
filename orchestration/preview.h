#pragma once
// `stylepipe preview`: one frame of a video through several variants of a
// config, side by side in a labelled contact sheet (PNG).
#include <string>
#include <vector>

#include "pipeline/config.h"
#include "pipeline/stage_chain.h"

namespace sp {

struct PreviewRequest {
  std::string config_path;
  std::vector<std::string> extra_configs;  // --config: one more tile each
  std::vector<std::string> variations;     // --vary STAGE.PARAM=V1,V2,...: one row each
  std::string input, output;
  double at_seconds = 0;                    // the first frame at or after this time (as `run --start`)
  std::string backend = "auto";
  std::string font;         // empty: fontconfig's sans-serif
  std::string layout_json;  // where to write the tiles' rectangles and labels, if anywhere
  bool overwrite = false;
};

// One tile: the chain it shows and the label under it.
struct PreviewTile {
  std::string label;
  std::vector<StageSpec> stages;  // empty: the original frame
};

// The sheet's rows: [original, CONFIG, each --config], then one row per
// --vary flag with a tile per value (CONFIG with that one parameter changed
// in every instance of the stage). Reads the configs and checks every value;
// throws sp::Error(config) naming the flag or file before any video is read.
std::vector<std::vector<PreviewTile>> plan_preview_tiles(const PreviewRequest& request);

// Plans, decodes the frame (after the warm-up the chains' temporal stages
// ask for), runs each tile's chain on the chosen backend and writes the PNG.
int run_preview(const PreviewRequest& request);

}  // namespace sp
