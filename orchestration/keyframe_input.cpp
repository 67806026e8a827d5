#include "orchestration/keyframe_input.h"

#include <cerrno>

#include "pipeline/errors.h"
#include "pipeline/interrupt.h"

namespace sp {
namespace {

int interrupt_callback(void*) { return interrupted() ? 1 : 0; }

// As the reader chooses: the best video stream, but not a cover picture.
int choose_video_stream(AVFormatContext* format) {
  int best = av_find_best_stream(format, AVMEDIA_TYPE_VIDEO, -1, -1, nullptr, 0);
  if (best >= 0 && (format->streams[best]->disposition & AV_DISPOSITION_ATTACHED_PIC)) {
    best = -1;
    for (unsigned i = 0; i < format->nb_streams; ++i) {
      const AVStream* st = format->streams[i];
      if (st->codecpar->codec_type == AVMEDIA_TYPE_VIDEO && !(st->disposition & AV_DISPOSITION_ATTACHED_PIC)) {
        best = int(i);
        break;
      }
    }
  }
  return best;
}

}  // namespace

VideoInput open_video_input(const std::string& path) {
  VideoInput in;
  in.path = path;
  FfmpegLogWatch log_watch;
  AVFormatContext* format = avformat_alloc_context();
  if (!format) throw std::bad_alloc();
  format->interrupt_callback = {interrupt_callback, nullptr};
  log_watch.watch(format);
  int r = avformat_open_input(&format, path.c_str(), nullptr, nullptr);  // frees `format` on failure
  if (r < 0) {
    std::string message = path + ": " + av_error_text(r);
    const std::string detail = strip_log_prefix(log_watch.last_error());
    if (!detail.empty() && detail.find(av_error_text(r)) == std::string::npos) message += " (" + detail + ")";
    if (r == AVERROR_EXIT) throw Error(ExitCode::interrupted, path + ": interrupted while opening");
    if (r == AVERROR(ENOENT) || r == AVERROR(EACCES) || r == AVERROR(EISDIR) || r == AVERROR(ENOTDIR))
      throw Error(ExitCode::no_input, message);
    throw Error(ExitCode::data_error, message);
  }
  in.format.reset(format);
  r = avformat_find_stream_info(format, nullptr);
  if (r == AVERROR_EXIT) throw Error(ExitCode::interrupted, path + ": interrupted while probing");
  if (r < 0) throw Error(ExitCode::data_error, path + ": cannot read stream parameters: " + av_error_text(r));
  const int video = choose_video_stream(format);
  if (video < 0) throw Error(ExitCode::data_error, path + ": no video stream (read as " + format->iformat->name + ")");
  in.video = format->streams[video];
  for (unsigned i = 0; i < format->nb_streams; ++i)
    if (int(i) != video) format->streams[i]->discard = AVDISCARD_ALL;
  return in;
}

bool read_video_packet(VideoInput& in, AVPacket* packet) {
  for (;;) {
    av_packet_unref(packet);
    const int r = av_read_frame(in.format.get(), packet);
    if (r == AVERROR_EOF) return false;
    if (r == AVERROR_EXIT) throw Error(ExitCode::interrupted, in.path + ": interrupted while scanning");
    if (r < 0) throw Error(ExitCode::data_error, in.path + ": cannot read packets: " + av_error_text(r));
    if (packet->stream_index == in.video->index) return true;
  }
}

}  // namespace sp
