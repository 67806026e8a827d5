#include "codecs/muxer.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>

#include <filesystem>
#include <vector>

#include "codecs/muxer_names.h"
#include "codecs/pipe_splicer.h"
#include "codecs/video_parameters_tag.h"
#include "pipeline/background_removal.h"
#include "pipeline/log.h"

namespace sp {

namespace {

// av_dict_set and av_dict_copy fail only when out of memory.
void dict_result(int r) {
  if (r < 0) throw std::bad_alloc();
}

#if LIBAVFORMAT_VERSION_MAJOR >= 61
using WrittenBytes = const uint8_t*;
#else
using WrittenBytes = uint8_t*;
#endif

int write_all_to_stdout(void*, WrittenBytes bytes, int size) {
  const uint8_t* p = bytes;
  size_t left = size_t(size);
  while (left > 0) {
    const ssize_t w = ::write(STDOUT_FILENO, p, left);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) return AVERROR(errno);
    p += w;
    left -= size_t(w);
  }
  return size;
}

int splice_copy_to_stdout(void* splicer, WrittenBytes bytes, int size) {
  return static_cast<PipeSplicer*>(splicer)->write_copy(bytes, size);
}

// stdout of a live run for muxers that write a packet in pieces: FFmpeg's
// pipe protocol sends each piece with its own write() when direct
// (yuv4mpegpipe writes row by row: ~2,900 calls for a 1024x960 frame, each
// a wake-up of the reader) and otherwise in 32 KB pieces. This context
// gathers the whole packet; the flush after it is one write(), or into a pipe
// one vmsplice from a copy that the splicer holds until it is read.
AVIOContext* open_live_stdout(size_t bytes, PipeSplicer* splicer) {
  auto* buffer = static_cast<uint8_t*>(av_malloc(bytes));
  if (!buffer) throw std::bad_alloc();
  AVIOContext* pb = splicer ? avio_alloc_context(buffer, int(bytes), 1, splicer, nullptr, splice_copy_to_stdout, nullptr)
                            : avio_alloc_context(buffer, int(bytes), 1, nullptr, nullptr, write_all_to_stdout, nullptr);
  if (!pb) {
    av_free(buffer);
    throw std::bad_alloc();
  }
  pb->seekable = 0;
  return pb;
}

}  // namespace

Muxer::Muxer(const MuxerOptions& options, const MuxedVideo& video, const std::vector<CopyStream>& copy_streams,
             const AVDictionary* metadata)
    : options_(options) {
  log_watch_ = std::make_unique<FfmpegLogWatch>();
  copy_packet_ = make_packet();
  try {
    open(video, copy_streams, metadata);
  } catch (...) {
    discard();  // a constructor that throws gets no destructor
    throw;
  }
}

Muxer::~Muxer() {
  log_watch_.reset();
  close_file();
}

int Muxer::close_io() {
  if (!context_->pb || (context_->oformat->flags & AVFMT_NOFILE)) return 0;
  if (!live_stdout_) return avio_closep(&context_->pb);
  avio_flush(context_->pb);
  const int error = context_->pb->error;
  av_freep(&context_->pb->buffer);
  avio_context_free(&context_->pb);
  live_stdout_ = false;
  return error;
}

void Muxer::close_file() {
  if (!context_) return;
  close_io();
  avformat_free_context(context_);
  context_ = nullptr;
  video_stream_ = nullptr;
}

std::string temporary_output_path(const std::string& path) {
  const std::filesystem::path p(path);
  return (p.parent_path() / (std::string(".") + p.filename().string() + ".partial")).string();
}

void move_into_place(const std::string& temporary, const std::string& path, std::error_code& error) {
  namespace fs = std::filesystem;
  error.clear();
  if (!fs::is_regular_file(fs::symlink_status(path, error))) {
    error.clear();
    fs::rename(temporary, path, error);
    return;
  }
  const fs::path p(path);
  fs::path aside_path = p;
  aside_path.replace_filename(".replaced." + p.filename().string());
  const std::string aside = aside_path.string();
  fs::rename(path, aside, error);
  if (error) return;
  fs::rename(temporary, path, error);
  std::error_code ignored;
  if (error) {
    fs::rename(aside, path, ignored);
    return;
  }
  remove_in_background(aside);
}

bool written_in_place(const std::string& path) {
  std::error_code ec;
  const std::filesystem::file_status status = std::filesystem::status(path, ec);
  return !ec && std::filesystem::exists(status) && !std::filesystem::is_regular_file(status) &&
         !std::filesystem::is_directory(status);
}

void Muxer::discard() {
  finished_ = true;
  close_file();
  if (created_file_) {
    std::error_code ec;
    std::filesystem::remove(options_.plan.ffmpeg_url, ec);
    created_file_ = false;
  }
}

void Muxer::warn(const std::string& message) {
  warnings_.push_back(message);
  log_warning("{}", message);
}

void Muxer::fail(ExitCode code, const std::string& what, int error) {
  std::string message = options_.name + ": " + what + ": " + av_error_text(error);
  const std::string detail = strip_log_prefix(log_watch_->last_error());
  if (!detail.empty() && message.find(detail) == std::string::npos) message += " (" + detail + ")";
  throw Error(code, message);
}

void Muxer::open(const MuxedVideo& video, const std::vector<CopyStream>& copy_streams, const AVDictionary* metadata) {
  const OutputPlan& plan = options_.plan;
  const AVOutputFormat* f = plan.format;
  seekable_ = !plan.to_pipe && (plan.is_file || plan.ffmpeg_url.rfind("file:", 0) == 0);
  struct stat st {};
  if (plan.is_file && stat(plan.ffmpeg_url.c_str(), &st) == 0 && (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode)))
    seekable_ = false;
  // ADTS AAC (from transport streams) has no setup data until the first
  // packet; MP4 and Matroska need it in a header a pipe cannot go back to.
  const bool needs_setup_up_front = !seekable_ && (is_mov_family(f) || is_named(f, "matroska") || is_named(f, "webm"));
  std::vector<const CopyStream*> sure, unsure;
  for (const CopyStream& s : copy_streams) {
    const AVCodecID id = s.codecpar->codec_id;
    const AVMediaType type = s.codecpar->codec_type;
    const int accepted = avformat_query_codec(f, id, FF_COMPLIANCE_NORMAL);
    std::string why;
    if (type == AVMEDIA_TYPE_AUDIO && f->audio_codec == AV_CODEC_ID_NONE)
      why = std::string(f->name) + " carries no audio";
    else if (id == AV_CODEC_ID_AAC && s.codecpar->extradata_size == 0 && needs_setup_up_front && accepted != 0)
      why = std::string(f->name) + " to a pipe needs the AAC setup in its header, and ADTS input has it only in the "
            "packets (write a file, or use nut)";
    else if (type == AVMEDIA_TYPE_SUBTITLE && f->subtitle_codec == AV_CODEC_ID_NONE && accepted != 1)
      why = std::string(f->name) + " carries no subtitles";
    else if (accepted == 0)
      why = std::string(f->name) + " cannot carry " + avcodec_get_name(id);
    if (!why.empty()) {
      warn(s.description + " dropped: " + why);
      continue;
    }
    (accepted == 1 ? sure : unsure).push_back(&s);
  }
  std::vector<const CopyStream*> all = sure;
  all.insert(all.end(), unsure.begin(), unsure.end());
  int error = 0;
  if (try_open(video, all, metadata, unsure.empty(), &error)) return;
  for (const CopyStream* s : unsure)
    warn(s->description + " dropped: " + f->name + " refused it (" + av_error_text(error) + ")");
  try_open(video, sure, metadata, true, &error);
}

bool Muxer::try_open(const MuxedVideo& video, const std::vector<const CopyStream*>& streams,
                     const AVDictionary* metadata, bool last_try, int* error) {
  const OutputPlan& plan = options_.plan;
  int r = avformat_alloc_output_context2(&context_, plan.format, nullptr, plan.ffmpeg_url.c_str());
  if (r < 0 || !context_) fail(ExitCode::internal, "cannot set up the muxer", r);
  log_watch_->watch(context_);

  video_stream_ = avformat_new_stream(context_, nullptr);
  if (!video_stream_) throw std::bad_alloc();
  r = avcodec_parameters_copy(video_stream_->codecpar, video.codecpar);
  if (r < 0) fail(ExitCode::internal, "cannot copy the video parameters", r);
  video_stream_->time_base = video.time_base;
  video_stream_->avg_frame_rate = video.frame_rate;
  video_stream_->sample_aspect_ratio = video.sample_aspect_ratio;
  if (is_named(plan.format, "nut")) {
    tag_video_parameters(*video.codecpar, &video_stream_->metadata);
    if (video.timestamp_offset.num != 0) tag_timestamp_offset(video.timestamp_offset, &video_stream_->metadata);
  }

  output_index_.clear();
  input_time_bases_.clear();
  for (const CopyStream* s : streams) {
    AVStream* st = avformat_new_stream(context_, nullptr);
    if (!st) throw std::bad_alloc();
    r = avcodec_parameters_copy(st->codecpar, s->codecpar);
    if (r < 0) fail(ExitCode::internal, "cannot copy stream parameters", r);
    // Keep the input's codec tag only where this container knows it for the codec.
    uint32_t tag = 0;
    const AVCodecTag* const* tags = context_->oformat->codec_tag;
    if (tags && av_codec_get_id(tags, st->codecpar->codec_tag) != st->codecpar->codec_id &&
        av_codec_get_tag2(tags, st->codecpar->codec_id, &tag))
      st->codecpar->codec_tag = 0;
    st->time_base = s->time_base;
    st->disposition = s->disposition;
    dict_result(av_dict_copy(&st->metadata, s->metadata, 0));
    if (size_t(s->index) >= output_index_.size()) {
      output_index_.resize(s->index + 1, -1);
      input_time_bases_.resize(s->index + 1, AVRational{1, 1});
    }
    output_index_[s->index] = st->index;
    input_time_bases_[s->index] = s->time_base;
  }
  if (metadata) dict_result(av_dict_copy(&context_->metadata, metadata, 0));
  for (const auto& [key, value] : options_.metadata_tags)
    dict_result(av_dict_set(&context_->metadata, key.c_str(), value.c_str(), 0));

  AVDictionary* opts = nullptr;
  std::unique_ptr<AVDictionary*, void (*)(AVDictionary**)> opts_owner(&opts, av_dict_free);
  if (is_mov_family(plan.format) && !seekable_)  // no index to write at the end: fragments
    dict_result(av_dict_set(&opts, "movflags", "+frag_keyframe+empty_moov+default_base_moof", 0));
  if (plan.single_image) dict_result(av_dict_set(&opts, "update", "1", 0));
  if (options_.low_latency) context_->flush_packets = 1;

  if (!(plan.format->flags & AVFMT_NOFILE)) {
    const bool live_pipe = options_.low_latency && plan.ffmpeg_url == "pipe:1";
    if (live_pipe) grow_pipe(STDOUT_FILENO, options_.live_pipe_bytes);
    if (live_pipe && !is_named(plan.format, "rawvideo")) {
      if (PipeSplicer::usable(STDOUT_FILENO)) splicer_ = std::make_unique<PipeSplicer>(STDOUT_FILENO);
      splice_y4m_frames_ = splicer_ && is_named(plan.format, "yuv4mpegpipe") && context_->nb_streams == 1;
      context_->pb = open_live_stdout(options_.live_pipe_bytes, splicer_.get());
      context_->flags |= AVFMT_FLAG_CUSTOM_IO;
      live_stdout_ = true;
    } else {
      // rawvideo writes each packet in one piece: direct, it goes out uncopied.
      r = avio_open2(&context_->pb, plan.ffmpeg_url.c_str(), AVIO_FLAG_WRITE | (live_pipe ? AVIO_FLAG_DIRECT : 0),
                     nullptr, nullptr);
      if (r < 0) fail(ExitCode::io_error, "cannot open for writing", r);
      // rawvideo has no header or trailer: its packets can bypass the muxer into the pipe.
      if (live_pipe && context_->nb_streams == 1 && PipeSplicer::usable(STDOUT_FILENO)) {
        splicer_ = std::make_unique<PipeSplicer>(STDOUT_FILENO);
        splice_packets_ = true;
      }
    }
    created_file_ = plan.is_file && !written_in_place(plan.ffmpeg_url);  // a device or FIFO is never removed
  }
  r = avformat_init_output(context_, &opts);
  if (r < 0) {
    if (!last_try) {
      *error = r;
      close_file();
      return false;
    }
    const bool bad_combination = r == AVERROR(EINVAL) || r == AVERROR_INVALIDDATA || r == AVERROR_PATCHWELCOME ||
                                 r == AVERROR(ENOSYS);
    fail(bad_combination ? ExitCode::usage : ExitCode::io_error,
         std::string("cannot start the ") + plan.format->name + " output", r);
  }
  r = avformat_write_header(context_, nullptr);
  if (r < 0) fail(ExitCode::io_error, "cannot write the header", r);
  return true;
}

void Muxer::write(AVPacket* packet) {
  const int r = av_interleaved_write_frame(context_, packet);  // takes the packet's reference
  if (r < 0) fail(ExitCode::io_error, "write failed", r);
  if (options_.low_latency && context_->pb) avio_flush(context_->pb);
}

void Muxer::write_video(AVPacket* packet) {
  if (finished_) throw Error(ExitCode::internal, options_.name + ": video written after the end");
  if (splice_packets_) {
    if (const int r = splicer_->write(packet); r < 0) fail(ExitCode::io_error, "write failed", r);
    return;
  }
  packet->stream_index = video_stream_->index;
  write(packet);
}

// What FFmpeg's y4m muxer writes before each frame's planes (no per-frame
// parameters): the stream header said them all.
constexpr char kY4mFrameHeader[] = "FRAME\n";

void Muxer::write_raw_picture(AVPacket* packet) {
  if (finished_) throw Error(ExitCode::internal, options_.name + ": video written after the end");
  if (!splice_y4m_frames_) throw Error(ExitCode::internal, options_.name + ": raw pictures for a muxer that takes packets");
  avio_flush(context_->pb);  // the stream header, or a frame the muxer wrote, goes first
  if (context_->pb->error < 0) fail(ExitCode::io_error, "write failed", context_->pb->error);
  int r = splicer_->write_copy(reinterpret_cast<const uint8_t*>(kY4mFrameHeader), int(sizeof kY4mFrameHeader - 1));
  if (r >= 0) r = splicer_->write(packet);
  else av_packet_unref(packet);
  if (r < 0) fail(ExitCode::io_error, "write failed", r);
}

bool Muxer::write_copied(const AVPacket* packet) {
  const int index = packet->stream_index;
  if (finished_ || index < 0 || size_t(index) >= output_index_.size() || output_index_[index] < 0) return false;
  const AVStream* st = context_->streams[output_index_[index]];
  int r = av_packet_ref(copy_packet_.get(), packet);
  if (r < 0) fail(ExitCode::internal, "cannot reference a packet", r);
  av_packet_rescale_ts(copy_packet_.get(), input_time_bases_[index], st->time_base);
  copy_packet_->stream_index = st->index;
  copy_packet_->pos = -1;
  r = av_interleaved_write_frame(context_, copy_packet_.get());  // takes the reference
  if (r == AVERROR_INVALIDDATA) {
    // A packet the stream's bitstream filter refuses, before it is queued: the
    // end of a cut transport stream gives AAC a fragment too short for its
    // ADTS header, which MP4 and Matroska have converted (aac_adtstoasc). The
    // reader reports the cut; that packet is lost, not the output.
    const std::string detail = strip_log_prefix(log_watch_->last_error());
    warn(options_.name + ": dropped a packet of stream #" + std::to_string(index) + " that the muxer refuses (" +
         av_error_text(r) + (detail.empty() ? "" : ": " + detail) + ")");
    av_packet_unref(copy_packet_.get());
    return false;
  }
  if (r < 0) fail(ExitCode::io_error, "write failed", r);
  if (options_.low_latency && context_->pb) avio_flush(context_->pb);
  ++packets_copied_;
  return true;
}

void Muxer::finish() {
  if (finished_) return;
  finished_ = true;
  if (!context_) return;
  int r = av_write_trailer(context_);
  const int trailer_error = r;
  r = close_io();
  if (trailer_error < 0) fail(ExitCode::io_error, "cannot finish the file", trailer_error);
  if (r < 0) fail(ExitCode::io_error, "cannot close the file", r);
}

}  // namespace sp
