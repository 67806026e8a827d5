#include "orchestration/segment_file.h"

#include <fmt/format.h>

#include <filesystem>
#include <optional>

#include "codecs/ffmpeg_util.h"
#include "codecs/muxer.h"
#include "codecs/video_parameters_tag.h"
#include "pipeline/errors.h"

namespace sp {

SegmentFile::SegmentFile(int index, const std::string& path)
    : name_(fmt::format("segment {} ({})", index, path)), log_watch_(std::make_unique<FfmpegLogWatch>()) {
  open(path);
}

SegmentFile::SegmentFile(int index, std::shared_ptr<GrowingFile> growing)
    : name_(fmt::format("segment {} ({}, as it is written)", index, growing->path())),
      growing_(std::move(growing)),
      log_watch_(std::make_unique<FfmpegLogWatch>()) {
  constexpr int kBufferBytes = 1 << 16;
  auto* buffer = static_cast<unsigned char*>(av_malloc(kBufferBytes));
  if (buffer) growing_io_ = avio_alloc_context(buffer, kBufferBytes, 0, this, &SegmentFile::read_growing, nullptr, nullptr);
  if (!growing_io_) {
    av_free(buffer);
    throw std::bad_alloc();
  }
  growing_io_->seekable = 0;
  try {
    open(growing_->path());
  } catch (...) {
    av_freep(&growing_io_->buffer);
    avio_context_free(&growing_io_);
    throw;
  }
}

int SegmentFile::read_growing(void* opaque, uint8_t* buffer, int size) {
  auto* self = static_cast<SegmentFile*>(opaque);
  const int n = self->growing_->read_at(buffer, size, self->growing_offset_);
  if (n > 0) self->growing_offset_ += n;
  return n;
}

void SegmentFile::open(const std::string& path) {
  const AVInputFormat* nut = av_find_input_format(kSegmentFormat);
  if (!nut) throw Error(ExitCode::unavailable, std::string("this FFmpeg cannot read ") + kSegmentFormat);
  context_ = avformat_alloc_context();
  if (!context_) throw std::bad_alloc();
  context_->pb = growing_io_;  // null: the file by its name
  log_watch_->watch(context_);
  const int r = avformat_open_input(&context_, path.c_str(), nut, nullptr);  // frees the context on failure
  if (r < 0) fail("is not a readable segment file: " + av_error_text(r));
  try {
    check_opened();
  } catch (...) {
    avformat_close_input(&context_);  // a constructor that throws gets no destructor
    throw;
  }
}

void SegmentFile::check_opened() {
  // A worker's tag holds what probing would decode a 1080p picture or more
  // to learn (about 50 ms a file, twice per segment).
  bool tagged = false;
  try {
    if (context_->nb_streams == 1) {
      const AVStream& video = *context_->streams[0];
      tagged = restore_video_parameters(video.metadata, video.codecpar);
      timestamp_offset_ = tagged_timestamp_offset(video.metadata, video.time_base);
    }
  } catch (const Error& e) {
    fail(std::string("has a bad tag: ") + e.what());
  }
  if (!tagged) {
    const int r = avformat_find_stream_info(context_, nullptr);
    if (r < 0) fail("has unreadable stream parameters: " + av_error_text(r));
  }
  if (context_->nb_streams != 1 || context_->streams[0]->codecpar->codec_type != AVMEDIA_TYPE_VIDEO)
    fail(fmt::format("has {} streams; a segment holds one video stream", context_->nb_streams));
  // The NUT muxer ends a file with an index; without it (a file cut short:
  // a worker killed, a copy broken off) the demuxer says so while opening,
  // in its log only ("read_timestamp failed").
  if (!log_watch_->take_errors().empty()) fail("is incomplete or damaged");
}

SegmentFile::~SegmentFile() {
  log_watch_.reset();
  avformat_close_input(&context_);
  if (growing_io_) {  // a caller's AVIOContext outlives the format context
    av_freep(&growing_io_->buffer);
    avio_context_free(&growing_io_);
  }
}

void SegmentFile::fail(const std::string& what) const {
  std::string message = name_ + " " + what;
  const std::string detail = strip_log_prefix(log_watch_->last_error());
  if (!detail.empty() && message.find(detail) == std::string::npos) message += " (" + detail + ")";
  throw Error(ExitCode::data_error, message);
}

bool SegmentFile::read(AVPacket* packet) {
  const int r = av_read_frame(context_, packet);
  // The NUT demuxer resynchronizes over damage and only says so in its log.
  const std::vector<std::string> errors = log_watch_->take_errors();
  if (!errors.empty()) fail("is damaged: " + strip_log_prefix(errors.front()));
  if (r == AVERROR_EOF) return false;
  if (r < 0) fail("cannot be read: " + av_error_text(r));
  if (packet->flags & AV_PKT_FLAG_CORRUPT) fail("has a corrupt packet");
  if (packet->pts != AV_NOPTS_VALUE) packet->pts -= timestamp_offset_;
  if (packet->dts != AV_NOPTS_VALUE) packet->dts -= timestamp_offset_;
  return true;
}

namespace {

namespace fs = std::filesystem;

std::string describe(const AVCodecParameters& p) {
  const char* format = av_get_pix_fmt_name(AVPixelFormat(p.format));
  return fmt::format("{} {}x{} {}", avcodec_get_name(p.codec_id), p.width, p.height, format ? format : "?");
}

std::string tag_value(const AVDictionary* tags, const char* key) {
  const AVDictionaryEntry* e = av_dict_get(tags, key, nullptr, 0);
  return e ? e->value : "";
}

}  // namespace

SegmentChecker::SegmentChecker(const Manifest& m) : manifest_(m) {}
SegmentChecker::~SegmentChecker() = default;

void SegmentChecker::check(SegmentToJoin& segment) {
  SegmentFile file(segment.index, segment.path);
  check_header(file, segment.index);
  SegmentFrameCheck frames = frame_check(file, segment);
  PacketPtr packet = make_packet();
  while (file.read(packet.get())) {
    frames.add(*packet);
    av_packet_unref(packet.get());
  }
  segment.frames = frames.finish();
}

void SegmentChecker::check_header(const SegmentFile& file, int index) {
  check_tags(file, index);
  check_format(file);
}

void SegmentChecker::check_tags(const SegmentFile& file, int index) const {
  const std::string plan = tag_value(file.tags(), kPlanIdTag);
  if (plan.empty()) throw Error(ExitCode::data_error, file.name() + " is not a segment of a stylepipe plan (it has no " + kPlanIdTag + " tag)");
  if (plan != manifest_.plan_id)
    throw Error(ExitCode::data_error, fmt::format("{} belongs to another plan ({}; this plan is {})", file.name(), plan, manifest_.plan_id));
  const std::string written_index = tag_value(file.tags(), kSegmentIndexTag);
  if (written_index != std::to_string(index))
    throw Error(ExitCode::data_error, fmt::format("{} was written as segment '{}' of the plan", file.name(), written_index));
}

void SegmentChecker::check_format(const SegmentFile& file) {
  const AVCodecParameters& p = *file.video().codecpar;
  if (!first_) {
    first_ = file.name();
    first_time_base_ = file.video().time_base;
    first_parameters_.reset(avcodec_parameters_alloc());
    if (!first_parameters_ || avcodec_parameters_copy(first_parameters_.get(), &p) < 0) throw std::bad_alloc();
    return;
  }
  const AVCodecParameters& f = *first_parameters_;
  if (p.codec_id != f.codec_id || p.width != f.width || p.height != f.height || p.format != f.format)
    throw Error(ExitCode::data_error, fmt::format("{} is {}, {} is {}", file.name(), describe(p), *first_, describe(f)));
  if (!same_extradata(p, f))
    throw Error(ExitCode::data_error, fmt::format("{} has other codec setup data (extradata) than {}", file.name(), *first_));
  // The concat derives decode times from the presentation times, by one
  // reorder delay for the whole output.
  if (p.video_delay != f.video_delay)
    throw Error(ExitCode::data_error, fmt::format("{} reorders frames {} deep, {} {} deep", file.name(), p.video_delay,
                                                  *first_, f.video_delay));
  const AVRational tb = file.video().time_base;
  if (av_cmp_q(tb, first_time_base_) != 0)
    throw Error(ExitCode::data_error, fmt::format("{} has time base {}/{}, {} has {}/{}", file.name(), tb.num, tb.den,
                                                  *first_, first_time_base_.num, first_time_base_.den));
}

namespace {

std::string range_text(const SegmentPlan& plan, AVRational time_base) {
  const double tb = av_q2d(time_base);
  const std::string begin = plan.begin_pts ? fmt::format("{:.3f} s", *plan.begin_pts * tb) : "the start";
  const std::string end = plan.end_pts ? fmt::format("{:.3f} s", *plan.end_pts * tb) : "the end";
  return fmt::format("[{}, {})", begin, end);
}

}  // namespace

SegmentFrameCheck::SegmentFrameCheck(const Manifest& manifest, const SegmentFile& file, const SegmentToJoin& segment)
    : manifest_(manifest),
      plan_(manifest.segments.at(size_t(segment.index))),
      name_(file.name()),
      time_base_(file.video().time_base),
      unfinished_(segment.unfinished) {
  const auto near = AVRounding(AV_ROUND_NEAR_INF | AV_ROUND_PASS_MINMAX);
  if (plan_.begin_pts) begin_ = av_rescale_q_rnd(*plan_.begin_pts, manifest.time_base, time_base_, near);
  if (plan_.end_pts) end_ = av_rescale_q_rnd(*plan_.end_pts, manifest.time_base, time_base_, near);
}

void SegmentFrameCheck::add(const AVPacket& packet) {
  const int64_t pts = packet.pts;
  if (pts == AV_NOPTS_VALUE) throw Error(ExitCode::data_error, fmt::format("{} has a frame without a timestamp", name_));
  if (pts < begin_ || pts >= end_)
    throw Error(ExitCode::data_error, fmt::format("{} has a frame at {:.3f} s (pts {}), outside its range {}", name_,
                                                  pts * av_q2d(time_base_), pts, range_text(plan_, manifest_.time_base)));
  if (frames_ == 0 && !(packet.flags & AV_PKT_FLAG_KEY))
    throw Error(ExitCode::data_error, name_ + " does not start with a keyframe");
  ++frames_;
}

int64_t SegmentFrameCheck::finish() const {
  // An interrupted segment may have stopped before its first picture.
  if (frames_ == 0 && !unfinished_) throw Error(ExitCode::data_error, name_ + " has no frames");
  return frames_;
}

namespace {

bool is_file(const std::string& path) {
  std::error_code ec;
  return fs::exists(path, ec);
}

}  // namespace

std::vector<SegmentToJoin> segments_to_join(const Manifest& manifest, bool finished_prefix_only) {
  std::vector<SegmentToJoin> chosen;
  int not_finished = 0;
  std::optional<Error> first_missing;
  for (const SegmentPlan& plan : manifest.segments) {
    const std::string final_path = manifest.segment_path(plan.index);
    const std::string partial_path = manifest.partial_segment_path(plan.index);
    if (is_file(final_path)) {
      if (!first_missing) chosen.push_back({plan.index, final_path, false, 0, nullptr});
      continue;
    }
    const bool partial = is_file(partial_path);
    // A worker still writing (or killed while writing) has only the writer's hidden temporary file.
    const bool started = partial || is_file(manifest.writing_segment_path(plan.index));
    if (finished_prefix_only) {
      if (partial) chosen.push_back({plan.index, partial_path, true, 0, nullptr});
      break;
    }
    ++not_finished;
    if (!first_missing)
      first_missing = Error(ExitCode::no_input, fmt::format("segment {} ({}) is {}", plan.index, final_path,
                                                            started ? "unfinished" : "missing"));
  }
  if (first_missing) {
    if (not_finished == 1) throw *first_missing;
    throw Error(ExitCode::no_input, fmt::format("{} ({} of {} segments are not finished)", first_missing->what(),
                                                not_finished, manifest.segments.size()));
  }
  if (chosen.empty())  // only with finished_prefix_only
    throw Error(ExitCode::no_input, fmt::format("segment 0 ({}) is missing: nothing to join", manifest.segment_path(0)));
  SegmentChecker checker(manifest);
  int64_t frames = 0;
  for (SegmentToJoin& segment : chosen) {
    checker.check(segment);
    frames += segment.frames;
  }
  if (frames == 0)  // an interrupted segment 0 before its first frame
    throw Error(ExitCode::no_input, fmt::format("segment 0 ({}) has no frames yet: nothing to join",
                                                manifest.partial_segment_path(0)));
  return chosen;
}

bool segments_keep_b_frames(const Manifest& manifest) {
  return container_keeps_reordering(plan_container(manifest.output.path, manifest.output.format).format);
}

}  // namespace sp
