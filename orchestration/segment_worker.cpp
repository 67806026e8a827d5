#include <fmt/format.h>

#include <filesystem>

#include "codecs/nvdec.h"
#include "codecs/nvenc.h"
#include "orchestration/segment_file.h"
#include "orchestration/segment_plan.h"
#include "pipeline/device.h"
#include "pipeline/errors.h"
#include "pipeline/log.h"

namespace fs = std::filesystem;

namespace sp {
namespace {

TranscodeOptions segment_options(const Manifest& m, int index, const Config& config, const WorkerOverrides& o) {
  const SegmentPlan& segment = m.segments[size_t(index)];
  TranscodeOptions t;
  // In seconds as the frames' times are computed (pts * av_q2d), so that both
  // workers at a seam find the same first frame of a handover.
  const auto seconds = [&](std::optional<int64_t> pts) -> std::optional<double> {
    if (!pts) return std::nullopt;
    return double(*pts) * av_q2d(m.time_base);
  };
  const SegmentSeams seams{seconds(segment.begin_pts), seconds(segment.end_pts)};
  for (const StageConfig& s : config.stages) t.stages.push_back({s.name, s.params, seams});
  t.input.url = m.input_path;
  t.input.window = PtsWindow{segment.seek_pts, segment.begin_pts.value_or(INT64_MIN),
                             segment.end_pts.value_or(INT64_MAX), false};
  t.input.hwdec = *parse_hwdec(o.hwdec.value_or(m.hwdec));
  t.input.threads = o.threads.value_or(0);
  t.input.kept_decoder = o.kept_decoder;
  t.output.threads = o.threads.value_or(0);
  t.lead_in_frames = segment.begin_pts ? m.warmup_frames : 0;

  t.output.url = m.partial_segment_path(index);
  t.output.format = kSegmentFormat;
  t.output.codec = m.output.codec;
  t.output.crf = m.output.crf;
  t.output.preset = m.output.preset;
  t.output.pixel_format = m.output.pixel_format;
  t.output.overwrite = true;
  t.output.metadata_tags = {{kPlanIdTag, m.plan_id}, {kSegmentIndexTag, std::to_string(index)}};
  t.output.segment = true;
  t.output.segment_keeps_b_frames = segments_keep_b_frames(m);
  const std::string encoder = o.encoder.value_or(m.encoder);
  const auto choice = parse_encoder_choice(encoder);
  if (!choice) throw Error(ExitCode::usage, "--encoder: '" + encoder + "' is not one of auto, nvenc, software");
  t.output.encoder = *choice;

  t.backend = o.backend.value_or(m.backend);
  t.frames_in_flight = o.frames_in_flight.value_or(config.settings.frames_in_flight);
  t.queue_depth = o.queue_depth.value_or(config.settings.queue_depth);
  t.progress = o.progress;
  t.stats_json_path = o.stats_json_path;
  t.stop = o.stop;
  t.progress_sink = o.progress_sink;
  return t;
}

// "segment N: ", unless the thread's log context says it already (workers
// that are threads of a --jobs run).
std::string segment_prefix(int index) {
  return thread_log_context().empty() ? fmt::format("segment {}: ", index) : std::string();
}

}  // namespace

int run_segment(const Manifest& m, int index, const WorkerOverrides& o) {
  if (index < 0 || index >= int(m.segments.size()))
    throw Error(ExitCode::usage, fmt::format("--index {}: {} has segments 0..{}", index, m.path, m.segments.size() - 1));
  check_input_unchanged(m);
  const std::string done = m.segment_path(index);
  std::error_code ec;
  if (fs::exists(done, ec) && !o.force) {
    log_info("{}already done ({}); --force redoes it", segment_prefix(index), done);
    return 0;
  }
  // The workers never re-read the config file: it may have changed since the plan.
  const Config config = parse_config(m.config_text, m.path + " (config " + m.config_path + ")");
  const TranscodeOptions options = segment_options(m, index, config, o);
  fs::remove(options.output.url, ec);
  RunStats stats;
  const int code = run_transcode(options, stats);
  if (code != 0) return code;  // an interrupted segment stays partial: it plays, but is not done
  fs::rename(options.output.url, done, ec);
  if (ec) throw Error(ExitCode::io_error, done + ": cannot rename the finished segment (" + ec.message() + ")");
  log_info("{}{} frames (+{} warm-up) -> {}", segment_prefix(index), stats.frames_out, stats.frames_lead_in, done);
  return 0;
}

}  // namespace sp
