// MediaWriter's output: the muxer, its streams (the encoded video and the
// stream-copied ones the container accepts), the header, and the clean-up
// when opening fails.
#include <sys/stat.h>

#include <filesystem>

#include "codecs/media_writer.h"
#include "codecs/muxer_names.h"
#include "pipeline/errors.h"
#include "pipeline/log.h"

namespace sp {

void MediaWriter::open_output(const std::vector<CopyStream>& copy_streams, const AVDictionary* metadata,
                              const VideoStreamInfo& input) {
  const AVOutputFormat* f = plan_.format;
  seekable_ = !plan_.to_pipe && (plan_.is_file || options_.url.rfind("file:", 0) == 0);
  struct stat st {};
  if (plan_.is_file && stat(options_.url.c_str(), &st) == 0 && (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode)))
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
  if (try_open_output(all, metadata, input, unsure.empty(), &error)) return;
  for (const CopyStream* s : unsure)
    warn(s->description + " dropped: " + f->name + " refused it (" + av_error_text(error) + ")");
  try_open_output(sure, metadata, input, true, &error);
}

bool MediaWriter::try_open_output(const std::vector<const CopyStream*>& streams, const AVDictionary* metadata,
                                  const VideoStreamInfo& input, bool last_try, int* error) {
  int r = avformat_alloc_output_context2(&muxer_, plan_.format, nullptr, plan_.ffmpeg_url.c_str());
  if (r < 0 || !muxer_) fail(ExitCode::internal, "cannot set up the muxer", r);
  log_watch_->watch(muxer_);

  video_stream_ = avformat_new_stream(muxer_, nullptr);
  if (!video_stream_) throw std::bad_alloc();
  r = avcodec_parameters_from_context(video_stream_->codecpar, encoder_.get());
  if (r < 0) fail(ExitCode::internal, "cannot copy the encoder parameters", r);
  video_stream_->time_base = encoder_time_base_;
  video_stream_->avg_frame_rate = encoder_->framerate;
  video_stream_->sample_aspect_ratio = encoder_->sample_aspect_ratio;

  output_index_.clear();
  input_time_bases_.clear();
  for (const CopyStream* s : streams) {
    AVStream* st = avformat_new_stream(muxer_, nullptr);
    if (!st) throw std::bad_alloc();
    r = avcodec_parameters_copy(st->codecpar, s->codecpar);
    if (r < 0) fail(ExitCode::internal, "cannot copy stream parameters", r);
    // Keep the input's codec tag only where this container knows it for the codec.
    uint32_t tag = 0;
    const AVCodecTag* const* tags = muxer_->oformat->codec_tag;
    if (tags && av_codec_get_id(tags, st->codecpar->codec_tag) != st->codecpar->codec_id &&
        av_codec_get_tag2(tags, st->codecpar->codec_id, &tag))
      st->codecpar->codec_tag = 0;
    st->time_base = s->time_base;
    st->disposition = s->disposition;
    av_dict_copy(&st->metadata, s->metadata, 0);
    if (size_t(s->index) >= output_index_.size()) {
      output_index_.resize(s->index + 1, -1);
      input_time_bases_.resize(s->index + 1, AVRational{1, 1});
    }
    output_index_[s->index] = st->index;
    input_time_bases_[s->index] = s->time_base;
  }
  if (metadata) av_dict_copy(&muxer_->metadata, metadata, 0);
  for (const auto& [key, value] : options_.metadata_tags) av_dict_set(&muxer_->metadata, key.c_str(), value.c_str(), 0);

  AVDictionary* opts = nullptr;
  if (is_mov_family(plan_.format) && !seekable_)  // no index to write at the end: fragments
    av_dict_set(&opts, "movflags", "+frag_keyframe+empty_moov+default_base_moof", 0);
  if (plan_.single_image) av_dict_set(&opts, "update", "1", 0);
  if (options_.low_latency) muxer_->flush_packets = 1;

  if (!(plan_.format->flags & AVFMT_NOFILE)) {
    // Live output to a pipe: each packet in one write(), and a pipe that holds
    // two pictures, instead of 32 KB writes each waking the consumer.
    const bool live_pipe = options_.low_latency && plan_.ffmpeg_url == "pipe:1";
    if (live_pipe) grow_pipe(STDOUT_FILENO, 2 * plane_layout(encoder_format_, output_size_.width, output_size_.height).total_bytes());
    r = avio_open2(&muxer_->pb, plan_.ffmpeg_url.c_str(), AVIO_FLAG_WRITE | (live_pipe ? AVIO_FLAG_DIRECT : 0), nullptr,
                   nullptr);
    if (r < 0) {
      av_dict_free(&opts);
      fail(ExitCode::io_error, "cannot open for writing", r);
    }
    created_file_ = plan_.is_file;
  }
  r = avformat_init_output(muxer_, &opts);
  av_dict_free(&opts);
  if (r < 0) {
    if (!last_try) {
      *error = r;
      if (!(plan_.format->flags & AVFMT_NOFILE)) avio_closep(&muxer_->pb);
      avformat_free_context(muxer_);
      muxer_ = nullptr;
      return false;
    }
    const bool bad_combination = r == AVERROR(EINVAL) || r == AVERROR_INVALIDDATA || r == AVERROR_PATCHWELCOME ||
                                 r == AVERROR(ENOSYS);
    fail(bad_combination ? ExitCode::usage : ExitCode::io_error,
         std::string("cannot start the ") + plan_.format->name + " output", r);
  }
  r = avformat_write_header(muxer_, nullptr);
  if (r < 0) fail(ExitCode::io_error, "cannot write the header", r);
  (void)input;
  return true;
}

void MediaWriter::close_output_after_failure() {
  finished_ = true;
  if (muxer_) {
    if (muxer_->pb && !(muxer_->oformat->flags & AVFMT_NOFILE)) avio_closep(&muxer_->pb);
    avformat_free_context(muxer_);
    muxer_ = nullptr;
  }
  encoder_.reset();
  if (created_file_) {
    std::error_code ec;
    std::filesystem::remove(options_.url, ec);
  }
}

}  // namespace sp
