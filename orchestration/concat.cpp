#include "orchestration/concat.h"

#include <fmt/format.h>

#include <algorithm>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <filesystem>
#include <memory>
#include <optional>
#include <vector>

#include "codecs/h264_in_mp4.h"
#include "codecs/media_reader.h"
#include "codecs/muxer.h"
#include "codecs/muxer_names.h"
#include "codecs/video_parameters_tag.h"
#include "orchestration/joined_video.h"
#include "orchestration/segment_file.h"
#include "pipeline/errors.h"
#include "pipeline/interrupt.h"
#include "pipeline/log.h"

namespace sp {
namespace {

namespace fs = std::filesystem;

struct ParametersDeleter {
  void operator()(AVCodecParameters* p) const { avcodec_parameters_free(&p); }
};
using ParametersPtr = std::unique_ptr<AVCodecParameters, ParametersDeleter>;

OutputPlan output_plan(const Manifest& m, const ConcatOptions& options) {
  const OutputPlan plan = plan_container(m.output.path, m.output.format);
  if (!plan.is_file || (plan.format->flags & AVFMT_NOFILE))
    throw Error(ExitCode::usage, m.output.path + ": the segments are joined into one file (not a pipe, URL or image sequence)");
  check_output_path(m.output.path, plan, m.output.overwrite || options.overwrite);
  return plan;
}

// Written beside the output, so that the rename at the end cannot cross file systems.
// Segment 0's video stream as a single run would have described it to the
// muxer: what the segment's container lost comes back from its tag.
ParametersPtr output_video_parameters(const SegmentFile& segment) {
  ParametersPtr p(avcodec_parameters_alloc());
  if (!p || avcodec_parameters_copy(p.get(), segment.video().codecpar) < 0) throw std::bad_alloc();
  p->codec_tag = 0;  // the output container's own
  try {
    restore_video_parameters(segment.video().metadata, p.get());
  } catch (const Error& e) {
    throw Error(e.code(), segment.name() + ": " + e.what());
  }
  // Raw video's tag is its pixel layout, as the encoder of a single run sets
  // it: without one, NUT takes the first raw tag it knows (RGB555) and
  // Matroska refuses the stream.
  if (p->codec_id == AV_CODEC_ID_RAWVIDEO) p->codec_tag = avcodec_pix_fmt_to_codec_tag(AVPixelFormat(p->format));
  const AVRational sar = segment.video().sample_aspect_ratio;
  p->sample_aspect_ratio = sar.num > 0 && sar.den > 0 ? sar : AVRational{0, 1};
  return p;
}

// MP4, MOV and Matroska: FFmpeg's muxers write H.264 with lengths before
// its NAL units, and convert Annex B packets themselves where the stream's
// extradata is Annex B (codecs/h264_in_mp4.h).
bool stores_length_prefixed_h264(const OutputPlan& plan) {
  return is_named(plan.format, "mp4") || is_named(plan.format, "mov") || is_named(plan.format, "matroska");
}

void set_extradata(AVCodecParameters* p, const std::vector<uint8_t>& bytes) {
  av_freep(&p->extradata);
  p->extradata = static_cast<uint8_t*>(av_mallocz(bytes.size() + AV_INPUT_BUFFER_PADDING_SIZE));
  if (!p->extradata) throw std::bad_alloc();
  std::copy(bytes.begin(), bytes.end(), p->extradata);
  p->extradata_size = int(bytes.size());
}

// The time base a single run would mux the video in. NUT gave the segments a
// finer one (it refines coarse time bases by powers of two), so their
// timestamps convert to it exactly, unless the container keeps a constant
// rate: a single run rounds frame times to its grid, which the concat cannot
// repeat without re-encoding.
AVRational output_time_base(const OutputPlan& plan, const std::string& output, const AVStream& segment,
                            const VideoStreamInfo& input) {
  const AVCodecID codec = segment.codecpar->codec_id;
  if (avformat_query_codec(plan.format, codec, FF_COMPLIANCE_NORMAL) == 0)
    throw Error(ExitCode::usage, fmt::format("{}: {} cannot carry {} video", output, plan.format->name, avcodec_get_name(codec)));
  if (container_keeps_constant_rate(plan.format))
    throw Error(ExitCode::usage, fmt::format("{}: {} keeps a constant frame rate, which the segments' copied video "
                                             "cannot be rounded to; join into mkv, mp4, mov or nut",
                                             output, plan.format->name));
  return writer_video_time_base(plan.format, codec, input.time_base, input.frame_rate);
}

// A copied packet's time for interleaving (dts, else pts); nullopt if it has none.
std::optional<int64_t> copied_time(const AVPacket* p) {
  if (p->dts != AV_NOPTS_VALUE) return p->dts;
  if (p->pts != AV_NOPTS_VALUE) return p->pts;
  return std::nullopt;
}

AVRational time_base_of(const std::vector<CopyStream>& streams, int index) {
  for (const CopyStream& s : streams)
    if (s.index == index) return s.time_base;
  throw Error(ExitCode::internal, fmt::format("copied packet of unknown stream #{}", index));
}

// NUT keeps no durations, and its demuxer guesses them from the frame rate.
// A single run gives each frame its input frame's duration, and containers
// keep them: Matroska's DURATION tag is the latest end of any frame, MP4's
// last sample lasts its packet's duration (one of the last reorder delay + 1
// frames). So each frame takes its input frame's duration, read from the
// input as the copied streams are.
void take_input_duration(AVPacket* frame, MediaReader& input, AVRational video_tb) {
  const AVRational input_tb = input.video().time_base;
  const std::deque<FrameTime>& read = input.video_frames_read();
  // The output's time base may be the coarser: the input times that round to
  // this frame's lie within half of one of its ticks.
  auto at = std::lower_bound(read.begin(), read.end(), av_rescale_q_rnd(frame->pts - 1, video_tb, input_tb, AV_ROUND_DOWN),
                             [](const FrameTime& f, int64_t t) { return f.pts < t; });
  for (; at != read.end() && av_rescale_q(at->pts, input_tb, video_tb) <= frame->pts; ++at)
    if (av_rescale_q(at->pts, input_tb, video_tb) == frame->pts)
      frame->duration = std::max<int64_t>(1, av_rescale_q(at->duration, input_tb, video_tb));
}

// Frames come in decode order, and none shows before its decode time.
void forget_input_frames_before(MediaReader& input, const AVPacket* frame, AVRational video_tb) {
  if (frame->dts != AV_NOPTS_VALUE)
    input.forget_video_frames_before(
        av_rescale_q_rnd(frame->dts - 1, video_tb, input.video().time_base, AV_ROUND_DOWN));
}

// Whether the input's packet of the frame to write has been read.
bool input_read_through(const MediaReader& input, const AVPacket* frame, AVRational video_tb) {
  return input.video_read_through(av_rescale_q_rnd(frame->pts + 1, video_tb, input.video().time_base, AV_ROUND_UP));
}

struct Joined {
  int64_t frames = 0, packets_copied = 0;
};

// Video and copied packets interleaved by time. With the whole video each
// frame waits until the input has been read through its packet, to take its
// duration from there, and the last frames (in decode order: any of them may
// be the one shown last) wait for the end of the input (a single run's
// encoder also gives its last packets after the input's end). With only a
// prefix, copied packets starting after the video's end are left out.
Joined join(JoinedVideo& video, MediaReader& input, Muxer& muxer, bool whole_video) {
  const AVRational video_tb = muxer.video_stream()->time_base;
  const std::vector<CopyStream>& streams = input.copy_streams();
  PacketPtr frame = make_packet();
  bool have_frame = video.next(frame.get());
  MediaItem copied;
  bool have_copied = input.next(copied);
  Joined joined;
  std::vector<int> streams_past_end;
  while ((have_frame || have_copied) && !interrupted()) {
    bool copied_first = have_copied;
    if (have_copied && have_frame &&
        !(whole_video && (video.in_last_frames() || !input_read_through(input, frame.get(), video_tb)))) {
      const std::optional<int64_t> t = copied_time(copied.packet);
      copied_first = !t || av_compare_ts(*t, time_base_of(streams, copied.packet->stream_index), frame->dts, video_tb) < 0;
    }
    if (!copied_first) {
      if (whole_video) take_input_duration(frame.get(), input, video_tb);
      forget_input_frames_before(input, frame.get(), video_tb);
      muxer.write_video(frame.get());
      ++joined.frames;
      have_frame = video.next(frame.get());
      continue;
    }
    const int index = copied.packet->stream_index;
    const int64_t start = copied.packet->pts != AV_NOPTS_VALUE ? copied.packet->pts : copied.packet->dts;
    const bool past_end = !whole_video && !have_frame && start != AV_NOPTS_VALUE &&
                          av_compare_ts(start, time_base_of(streams, index), video.end(), video_tb) >= 0;
    if (!past_end) {
      joined.packets_copied += muxer.write_copied(copied.packet) ? 1 : 0;
    } else if (std::find(streams_past_end.begin(), streams_past_end.end(), index) == streams_past_end.end()) {
      streams_past_end.push_back(index);
      if (streams_past_end.size() == streams.size()) break;  // the rest of the input is past the cut
    }
    have_copied = input.next(copied);
  }
  if (interrupted()) throw Error(ExitCode::interrupted, "the concat was interrupted");
  if (input.data_error()) throw Error(ExitCode::data_error, *input.data_error());
  return joined;
}

}  // namespace

namespace {

// Opens the input and a muxer on a temporary name beside the output (set up
// from the first segment), joins the segments that `segments` gives (each
// checked as it is read, with a `checker`) and renames the output. Nothing
// is left behind on failure.
ConcatResult join_into_output(const Manifest& manifest, const OutputPlan& plan, const SegmentToJoin& first,
                              JoinedVideo::Segments segments, bool whole_video, SegmentChecker* checker = nullptr) {
  const std::string& output = manifest.output.path;
  InputOptions input_options;
  input_options.url = manifest.input_path;
  input_options.decode_video = false;
  MediaReader input(input_options);
  ParametersPtr video_parameters;
  AVRational time_base, segment_time_base;
  {
    const std::unique_ptr<SegmentFile> first_file = first.open();
    if (checker) checker->check_header(*first_file, first.index);
    time_base = output_time_base(plan, output, first_file->video(), input.video());
    segment_time_base = first_file->video().time_base;
    video_parameters = output_video_parameters(*first_file);
  }
  const bool length_prefixed = stores_length_prefixed_h264(plan) && is_annex_b_h264(*video_parameters);
  if (length_prefixed) set_extradata(video_parameters.get(), avcc_record(*video_parameters));
  MuxerOptions muxer_options;
  muxer_options.plan = plan;
  const bool in_place = written_in_place(output);  // a device or FIFO: no rename over it
  muxer_options.plan.ffmpeg_url = in_place ? output : temporary_output_path(output);
  muxer_options.name = output;
  const MuxedVideo video{video_parameters.get(), time_base, input.video().frame_rate,
                         video_parameters->sample_aspect_ratio};
  Muxer muxer(muxer_options, video, input.copy_streams(), input.metadata());
  ConcatResult result;
  try {
    JoinedVideo joined_video(std::move(segments), segment_time_base, video_parameters->video_delay,
                             muxer.video_stream()->time_base, checker, length_prefixed);
    const Joined joined = join(joined_video, input, muxer, whole_video);
    log_debug("{}: every packet joined", output);
    muxer.finish();
    log_debug("{}: finished", output);
    std::error_code ec;
    if (!in_place) move_into_place(muxer_options.plan.ffmpeg_url, output, ec);
    if (ec) throw Error(ExitCode::io_error, fmt::format("{}: cannot rename {} to it: {}", output, muxer_options.plan.ffmpeg_url, ec.message()));
    result.frames = joined.frames;
    result.packets_copied = joined.packets_copied;
  } catch (...) {
    muxer.discard();
    throw;
  }
  result.output = output;
  return result;
}

void log_joined(const Manifest& manifest, const ConcatResult& result) {
  log_info("{}: joined {} of {} segments ({} frames, {} copied packets)", result.output, result.segments,
           manifest.segments.size(), result.frames, result.packets_copied);
}

// Thrown inside the join when the segment it waits for will not come.
struct JoinAbandoned {};

}  // namespace

ConcatResult concat_segments(const Manifest& manifest, const ConcatOptions& options) {
  check_input_unchanged(manifest);
  const OutputPlan plan = output_plan(manifest, options);
  const std::vector<SegmentToJoin> segments = segments_to_join(manifest, options.finished_prefix_only);
  const bool whole_video = segments.size() == manifest.segments.size() && !segments.back().unfinished;
  auto listed = [&segments](size_t k) { return k < segments.size() ? std::optional(segments[k]) : std::nullopt; };
  ConcatResult result = join_into_output(manifest, plan, segments.front(), listed, whole_video);
  result.segments = int(segments.size());
  log_joined(manifest, result);
  return result;
}

SegmentArrivals::SegmentArrivals(size_t segments) : progress_(segments, Progress::not_begun) {}

void SegmentArrivals::writing(int index) {
  {
    std::lock_guard lock(mutex_);
    Progress& p = progress_.at(size_t(index));
    if (p == Progress::not_begun) p = Progress::writing;
  }
  changed_.notify_all();
}

void SegmentArrivals::finished(int index) {
  {
    std::lock_guard lock(mutex_);
    progress_.at(size_t(index)) = Progress::finished;
  }
  changed_.notify_all();
}

void SegmentArrivals::abandon() {
  {
    std::lock_guard lock(mutex_);
    abandoned_ = true;
  }
  changed_.notify_all();
}

FileWriter SegmentArrivals::writer(int index) const {
  if (abandoned_) return FileWriter::gone;
  return progress_.at(size_t(index)) == Progress::finished ? FileWriter::finished : FileWriter::writing;
}

FileWriter SegmentArrivals::wait_for_writer(int index) {
  std::unique_lock lock(mutex_);
  changed_.wait(lock, [&] { return abandoned_ || progress_.at(size_t(index)) != Progress::not_begun; });
  return writer(index);
}

FileWriter SegmentArrivals::wait_for_finish(int index, std::chrono::milliseconds timeout) {
  std::unique_lock lock(mutex_);
  changed_.wait_for(lock, timeout, [&] { return abandoned_ || progress_.at(size_t(index)) == Progress::finished; });
  return writer(index);
}

bool SegmentArrivals::abandoned() {
  std::lock_guard lock(mutex_);
  return abandoned_;
}

void announce_segment_writing(const Manifest& manifest, int index, SegmentArrivals& arrivals) {
  // A file only: anything else there is not an earlier writer's, and the
  // writer will say that it cannot write there.
  const std::string path = manifest.writing_segment_path(index);
  std::error_code ec;
  if (fs::is_regular_file(fs::symlink_status(path, ec))) fs::remove(path, ec);
  if (ec && ec != std::errc::no_such_file_or_directory)
    throw Error(ExitCode::io_error, fmt::format("{}: cannot remove it: {}", path, ec.message()));
  arrivals.writing(index);
}

std::optional<ConcatResult> concat_segments_as_they_finish(const Manifest& manifest, SegmentArrivals& arrivals) {
  const OutputPlan plan = output_plan(manifest, ConcatOptions{});
  // Each segment is checked as it is joined, so that the join after the last
  // worker reads it once (the output is a temporary file until the end).
  SegmentChecker checker(manifest);
  auto arrived = [&](size_t k) -> std::optional<SegmentToJoin> {
    if (k == manifest.segments.size()) return std::nullopt;
    const int index = int(k);
    SegmentToJoin segment;
    segment.index = index;
    segment.path = manifest.segment_path(index);
    auto wait = [&arrivals, index](std::chrono::milliseconds t) { return arrivals.wait_for_finish(index, t); };
    // The writer's file appears once its first frame is encoded.
    for (FileWriter w = arrivals.wait_for_writer(index);; w = wait(GrowingFile::kPoll)) {
      if (w == FileWriter::gone) throw JoinAbandoned{};
      if (w == FileWriter::finished) return segment;
      segment.growing = GrowingFile::open_if_there(manifest.writing_segment_path(index), wait);
      if (segment.growing) {
        segment.path = segment.growing->path();
        return segment;
      }
    }
  };
  try {
    const std::optional<SegmentToJoin> first = arrived(0);
    auto rest = [&, first](size_t k) { return k == 0 ? first : arrived(k); };
    ConcatResult result = join_into_output(manifest, plan, *first, rest, true, &checker);
    result.segments = int(manifest.segments.size());
    log_joined(manifest, result);
    return result;
  } catch (const JoinAbandoned&) {
    return std::nullopt;
  } catch (...) {
    if (arrivals.abandoned()) return std::nullopt;  // a segment read as it was written will not be finished
    throw;
  }
}

}  // namespace sp
