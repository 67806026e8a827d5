#include "orchestration/segment_plan.h"

extern "C" {
#include <libavutil/hash.h>
}

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <functional>
#include <memory>

#include "codecs/media_writer.h"
#include "codecs/nvdec.h"
#include "codecs/nvenc.h"
#include "orchestration/keyframes.h"
#include "pipeline/environment.h"
#include "pipeline/errors.h"
#include "pipeline/log.h"
#include "pipeline/stage.h"

namespace fs = std::filesystem;

namespace sp {
namespace {

std::string sha256_hex(const std::string& text) {
  AVHashContext* raw = nullptr;
  if (av_hash_alloc(&raw, "SHA256") < 0) throw std::bad_alloc();
  std::unique_ptr<AVHashContext, void (*)(AVHashContext*)> hash(raw, [](AVHashContext* h) { av_hash_freep(&h); });
  av_hash_init(hash.get());
  av_hash_update(hash.get(), reinterpret_cast<const uint8_t*>(text.data()), text.size());
  char out[2 * AV_HASH_MAX_SIZE + 1];
  av_hash_final_hex(hash.get(), reinterpret_cast<uint8_t*>(out), sizeof out);
  return out;
}

// What the final output will be; refuses what a concat of copied packets
// cannot make.
OutputPlan check_output(const ManifestOutput& o) {
  OutputOptions options;
  options.url = o.path;
  options.format = o.format;
  options.codec = o.codec;
  options.crf = o.crf;
  options.preset = o.preset;
  options.pixel_format = o.pixel_format;
  options.overwrite = o.overwrite;
  MediaWriter::preflight(options);
  OutputPlan plan = plan_output(options);
  if (plan.to_pipe || !plan.is_file || plan.image_sequence || plan.single_image || (plan.format->flags & AVFMT_NOTIMESTAMPS))
    throw Error(ExitCode::usage, o.path + ": segment-parallel runs write a video file (mp4, mkv, mov, webm, nut, ...), "
                                          "not a pipe or images");
  if (container_keeps_constant_rate(plan.format))
    throw Error(ExitCode::usage, o.path + ": " + plan.format->name +
                                     " keeps a constant frame rate, which copied segments cannot be fitted to; "
                                     "use mp4, mkv, mov, webm or nut, or run without --jobs");
  return plan;
}

// Rounds of segments of about 60 s. The concat reads each segment while it
// is written and the last round is staggered (segment_stagger.cpp), so more
// rounds no longer save a copy after the workers, and each segment pays its
// fixed cost (decoder, encoder, up to a GOP of pre-roll, warm-up, a
// temporal chain's cold frames). Measured on 2 x H200 (docs/perf.md, session
// 32), halftone over 60 s on two GPUs: one segment a worker 359-360 fps, two
// rounds of 15 s 343-349. Rounds still bound what a failed segment costs to
// redo on a long input.
int default_segments(const KeyframeScan& scan, int jobs) {
  if (jobs <= 1) return 1;
  constexpr double kSegmentSeconds = 60;
  const int rounds = scan.duration_seconds > 0 ? int(std::lround(scan.duration_seconds / (kSegmentSeconds * jobs))) : 1;
  return jobs * std::clamp(rounds, 1, 256);
}

}  // namespace

namespace {

void for_each_stage(const Config& config, const std::function<void(const StageConfig&, const Stage&)>& visit) {
  for (const StageConfig& s : config.stages) visit(s, *StageRegistry::instance().create(s.name, s.params));
}

// Said once per plan, so that a user who wants no visible seam knows to run
// one segment before the workers spend the time.
void warn_of_state_lost_at_seams(const std::string& config_path, const Config& config, size_t segments) {
  if (segments < 2) return;
  const std::string where = segments == 2 ? "the seam" : fmt::format("each of the {} seams", segments - 1);
  for_each_stage(config, [&](const StageConfig& s, const Stage& stage) {
    const std::string lost = stage.state_lost_at_seams();
    if (!lost.empty())
      log_warning("{}:{}: {}: {} restarts at {}, as at a scene cut; one segment (no --jobs) keeps it", config_path,
                  s.line, s.name, lost, where);
  });
}

}  // namespace

Warmup chain_warmup(const Config& config) {
  Warmup w;
  for_each_stage(config, [&](const StageConfig&, const Stage& stage) { w.add(stage); });
  return w;
}

Manifest make_plan(const PlanRequest& r) {
  const Config config = load_config(r.config_path);
  if (r.segments <= 0 && r.segment_seconds <= 0 && r.jobs <= 0)
    throw Error(ExitCode::usage, "plan: give --segments N or --segment-seconds S");
  Manifest m;
  m.output = r.output;
  const OutputPlan output = check_output(m.output);  // "-" is stdout, not a file named so
  m.output.path = fs::absolute(r.output.path).lexically_normal().string();
  // Segments go through another container: pin the codec the output's own would choose.
  if (m.output.codec.empty()) m.output.codec = output.encoder->name;
  if (!parse_hwdec(r.hwdec)) throw Error(ExitCode::usage, "--hwdec: '" + r.hwdec + "' is not one of auto, nvdec, none");
  if (!parse_encoder_choice(r.encoder))
    throw Error(ExitCode::usage, "--encoder: '" + r.encoder + "' is not one of auto, nvenc, software");

  m.input_path = fs::absolute(r.input_path).lexically_normal().string();
  std::error_code ec;
  if (m.input_path == m.output.path || (fs::exists(m.output.path, ec) && fs::equivalent(m.input_path, m.output.path, ec)))
    throw Error(ExitCode::usage, r.output.path + ": the output is the input");
  m.input_fingerprint = fingerprint_file(m.input_path);
  const Warmup warmup = chain_warmup(config);
  const bool asked = r.segments > 0 || r.segment_seconds > 0;  // else cut for r.jobs workers
  const auto cut_request = [&](const KeyframeScan& facts) {
    return CutRequest{asked ? r.segments : default_segments(facts, r.jobs), r.segment_seconds,
                      warmup.frames_at(av_q2d(facts.frame_rate))};
  };
  const KeyframeScan scan = scan_keyframes_for(m.input_path, cut_request);
  m.video_stream = scan.video_stream;
  m.time_base = scan.time_base;
  m.input_duration_seconds = scan.duration_seconds;
  m.keyframe_source = scan.source;
  m.config_path = r.config_path;
  m.config_text = config.text;
  m.backend = r.backend;
  m.hwdec = r.hwdec;
  m.encoder = r.encoder;
  const CutRequest cuts = cut_request(scan);
  m.warmup_frames = cuts.warmup_frames;
  m.segments = asked ? choose_segments(scan, cuts.segments, cuts.segment_seconds, cuts.warmup_frames)
                     : choose_staggered_segments(scan, cuts.segments, r.jobs, cuts.warmup_frames);
  warn_of_state_lost_at_seams(r.config_path, config, m.segments.size());
  m.workdir = fs::absolute(r.workdir.empty() ? m.output.path + ".parts" : r.workdir).lexically_normal().string();
  // The same plan twice gets the same id, so its finished segments are reused.
  m.plan_id = sha256_hex(m.to_json().dump()).substr(0, 16);
  return m;
}

void save_plan(Manifest& m) {
  std::error_code ec;
  fs::create_directories(m.workdir, ec);
  if (ec) throw Error(ExitCode::io_error, m.workdir + ": cannot create the work directory (" + ec.message() + ")");
  m.path = (fs::path(m.workdir) / "manifest.json").string();
  // Segments of another plan in the same place would pass for finished ones.
  if (fs::exists(m.path, ec) && read_manifest(m.path).plan_id != m.plan_id) {
    log_info("{}: replacing another plan; its segments are discarded", m.workdir);
    for (const auto& entry : fs::directory_iterator(m.workdir, ec))
      if (entry.path().filename().string().rfind("segment_", 0) == 0) fs::remove(entry.path(), ec);
  }
  write_manifest(m, m.path);
}

std::optional<int> index_from_environment(std::string* source) {
  for (const char* name : {"SLURM_ARRAY_TASK_ID", "JOB_COMPLETION_INDEX", "AWS_BATCH_JOB_ARRAY_INDEX"}) {
    const std::optional<int64_t> index = integer_from_environment(name, 0, 1'000'000, "a segment index");
    if (!index) continue;
    if (source) *source = name;
    return int(*index);
  }
  return std::nullopt;
}

}  // namespace sp
