#include "codecs/png_file.h"

#include <cstdio>
#include <fstream>

#include "codecs/ffmpeg_util.h"
#include "pipeline/errors.h"

namespace sp {

void write_png(const AVFrame& picture, const std::string& path) {
  const AVCodec* codec = avcodec_find_encoder(AV_CODEC_ID_PNG);
  if (!codec) throw Error(ExitCode::unavailable, "this FFmpeg has no PNG encoder");
  CodecContextPtr context(avcodec_alloc_context3(codec));
  context->width = picture.width;
  context->height = picture.height;
  context->pix_fmt = AVPixelFormat(picture.format);
  context->time_base = {1, 1};
  int r = avcodec_open2(context.get(), codec, nullptr);
  if (r < 0) throw Error(ExitCode::internal, "cannot open the PNG encoder: " + av_error_text(r));
  PacketPtr packet = make_packet();
  r = avcodec_send_frame(context.get(), &picture);
  if (r >= 0) r = avcodec_send_frame(context.get(), nullptr);  // a still: flush at once
  if (r >= 0) r = avcodec_receive_packet(context.get(), packet.get());
  if (r < 0) throw Error(ExitCode::internal, "PNG encoding failed: " + av_error_text(r));
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(packet->data), packet->size);
  out.close();
  if (!out) throw Error(ExitCode::io_error, path + ": cannot write the PNG");
}

}  // namespace sp
