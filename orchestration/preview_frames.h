#pragma once
// The frames of a preview: the one at --at and the warm-up before it, and
// each tile's chain run over them.
#include <string>
#include <vector>

#include "codecs/media_reader.h"
#include "orchestration/contact_sheet.h"
#include "pipeline/buffer_pool.h"
#include "pipeline/stage_chain.h"

namespace sp {

struct PreviewFrames {
  std::vector<DecodedFrame> warmup;  // oldest first, at most the warm-up asked for
  DecodedFrame target;
  double target_seconds = 0;  // from the file's start, as `run --start` counts
  double frame_rate = 25;
};

// Decodes the first frame at or after `at_seconds` (the frame `run --start
// at_seconds` would begin with) and up to `warmup` (at the input's rate)
// frames before it. Throws sp::Error(usage) when the input ends before that time.
PreviewFrames decode_preview_frames(const std::string& input, double at_seconds, const Warmup& warmup);

// The warm-up a chain's temporal stages need before their output stands for
// the video: what its stages declare, added up (as a segment-parallel run's lead-in).
Warmup warmup_of(const std::vector<StageSpec>& stages);

// Runs the warm-up frames and then the target through `stages` on `backend`;
// returns the target's output. Warm-up frames of another size or pixel format
// than the target are left out: a run reconfigures the stages there, which
// also drops their state.
RgbaImage render_tile(const std::vector<StageSpec>& stages, const PreviewFrames& frames, Backend backend,
                      BufferPool& pool);

}  // namespace sp
