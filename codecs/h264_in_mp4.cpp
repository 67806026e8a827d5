#include "codecs/h264_in_mp4.h"

extern "C" {
#include <libavformat/avformat.h>
#include <libavutil/mem.h>
}

#include <cstring>
#include <string>

#include "codecs/ffmpeg_util.h"
#include "pipeline/errors.h"

namespace sp {
namespace {

// The first "00 00 01" at or after p that FFmpeg's muxers find: one that
// ends before the buffer's last byte (ff_avc_find_startcode looks no
// further); end where there is none.
const uint8_t* start_code(const uint8_t* p, const uint8_t* end) {
  while (end - p >= 4) {
    const auto* zero = static_cast<const uint8_t*>(std::memchr(p, 0, size_t(end - p - 3)));
    if (!zero) return end;
    if (zero[1] == 0 && zero[2] == 1) return zero;
    p = zero + 1;
  }
  return end;
}

// Where the NAL unit that goes on at p ends, as FFmpeg's muxers find it: at
// the next start code, or at the zero before it (a 4-byte start code) where
// that zero is at or after p.
const uint8_t* nal_end(const uint8_t* p, const uint8_t* end) {
  const uint8_t* code = start_code(p, end);
  return code < end && code > p && code[-1] == 0 ? code - 1 : code;
}

void check(int error, const char* what) {
  if (error < 0) throw Error(ExitCode::internal, std::string("avcC record: ") + what + ": " + av_error_text(error));
}

struct MemoryReader {
  const uint8_t* data;
  int64_t size, position = 0;
  static int read(void* opaque, uint8_t* buffer, int wanted) {
    auto* r = static_cast<MemoryReader*>(opaque);
    const int64_t n = std::min<int64_t>(wanted, r->size - r->position);
    if (n <= 0) return AVERROR_EOF;
    std::memcpy(buffer, r->data + r->position, size_t(n));
    r->position += n;
    return int(n);
  }
  static int64_t seek(void* opaque, int64_t offset, int whence) {
    auto* r = static_cast<MemoryReader*>(opaque);
    if (whence == AVSEEK_SIZE) return r->size;
    const int64_t base = (whence & ~AVSEEK_FORCE) == SEEK_CUR ? r->position : (whence & ~AVSEEK_FORCE) == SEEK_END ? r->size : 0;
    if (base + offset < 0 || base + offset > r->size) return AVERROR(EINVAL);
    return r->position = base + offset;
  }
};

// One sample of the stream muxed into memory as MP4.
std::vector<uint8_t> mp4_of_one_sample(const AVCodecParameters& annex_b) {
  AVFormatContext* out = nullptr;
  check(avformat_alloc_output_context2(&out, nullptr, "mp4", nullptr), "no MP4 muxer");
  std::unique_ptr<AVFormatContext, void (*)(AVFormatContext*)> owned(out, avformat_free_context);
  AVStream* stream = avformat_new_stream(out, nullptr);
  if (!stream) throw std::bad_alloc();
  check(avcodec_parameters_copy(stream->codecpar, &annex_b), "copying the stream's parameters");
  stream->codecpar->codec_tag = 0;
  stream->time_base = {1, 25};
  check(avio_open_dyn_buf(&out->pb), "a buffer");
  uint8_t* bytes = nullptr;
  auto close_buffer = [&] {
    const int size = avio_close_dyn_buf(out->pb, &bytes);
    out->pb = nullptr;
    std::vector<uint8_t> file(bytes, bytes + std::max(size, 0));
    av_free(bytes);
    return file;
  };
  try {
    check(avformat_write_header(out, nullptr), "writing the header");
    PacketPtr sample = make_packet();
    check(av_new_packet(sample.get(), annex_b.extradata_size), "a sample");
    std::memcpy(sample->data, annex_b.extradata, size_t(annex_b.extradata_size));  // its SPS and PPS
    sample->pts = sample->dts = 0;
    sample->duration = 1;
    sample->flags = AV_PKT_FLAG_KEY;
    check(av_write_frame(out, sample.get()), "writing a sample");
    check(av_write_trailer(out), "writing the trailer");
  } catch (...) {
    close_buffer();
    throw;
  }
  return close_buffer();
}

}  // namespace

bool is_annex_b_h264(const AVCodecParameters& p) {
  if (p.codec_id != AV_CODEC_ID_H264 || p.extradata_size < 4) return false;
  const uint8_t* e = p.extradata;
  return (e[0] == 0 && e[1] == 0 && e[2] == 1) || (e[0] == 0 && e[1] == 0 && e[2] == 0 && e[3] == 1);
}

std::vector<uint8_t> avcc_record(const AVCodecParameters& annex_b) {
  const std::vector<uint8_t> file = mp4_of_one_sample(annex_b);
  MemoryReader reader{file.data(), int64_t(file.size())};
  constexpr int kBufferSize = 4096;
  auto* buffer = static_cast<uint8_t*>(av_malloc(kBufferSize));
  if (!buffer) throw std::bad_alloc();
  AVIOContext* io = avio_alloc_context(buffer, kBufferSize, 0, &reader, MemoryReader::read, nullptr, MemoryReader::seek);
  if (!io) {
    av_free(buffer);
    throw std::bad_alloc();
  }
  AVFormatContext* in = avformat_alloc_context();
  if (!in) {
    av_freep(&io->buffer);
    avio_context_free(&io);
    throw std::bad_alloc();
  }
  in->pb = io;
  const int opened = avformat_open_input(&in, nullptr, av_find_input_format("mp4"), nullptr);  // frees `in` on failure
  std::vector<uint8_t> record;
  if (opened >= 0) {
    const AVCodecParameters* p = in->nb_streams == 1 ? in->streams[0]->codecpar : nullptr;
    if (p && p->extradata_size > 0 && p->extradata[0] == 1) record.assign(p->extradata, p->extradata + p->extradata_size);
    avformat_close_input(&in);
  }
  av_freep(&io->buffer);
  avio_context_free(&io);
  check(opened, "reading it back");
  if (record.empty()) throw Error(ExitCode::internal, "avcC record: FFmpeg's MP4 muxer wrote none");
  return record;
}

void annex_b_to_length_prefixed(AVPacket* packet) {
  const uint8_t* const begin = packet->data;
  const uint8_t* const end = begin + packet->size;
  // Each start code (3 bytes at least) becomes a length of 4: at most a
  // third more, and a length for a packet that has no start code at all.
  PacketPtr out = make_packet();
  check(av_new_packet(out.get(), packet->size + packet->size / 3 + 4), "a packet");
  uint8_t* write = out->data;
  const uint8_t* nal = nal_end(begin, end);
  for (;;) {
    while (nal < end && *nal == 0) ++nal;  // the start code's zeros
    if (nal >= end || ++nal == end) break;  // past its 01
    const uint8_t* stop = nal_end(nal, end);
    const uint32_t length = uint32_t(stop - nal);
    write[0] = uint8_t(length >> 24), write[1] = uint8_t(length >> 16), write[2] = uint8_t(length >> 8),
    write[3] = uint8_t(length);
    std::memcpy(write + 4, nal, length);
    write += 4 + length;
    nal = stop;
  }
  av_shrink_packet(out.get(), int(write - out->data));
  check(av_packet_copy_props(out.get(), packet), "a packet's properties");
  av_packet_unref(packet);
  av_packet_move_ref(packet, out.get());
}

}  // namespace sp
