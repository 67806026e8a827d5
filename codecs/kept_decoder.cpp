#include "codecs/kept_decoder.h"

#include <new>

namespace sp {
namespace {

bool same_rational(AVRational a, AVRational b) { return a.num == b.num && a.den == b.den; }

// Every field avcodec_parameters_to_context() gives a video decoder, so that
// the kept decoder is the one a fresh open would make; the extradata holds
// the parameter sets (avcC/hvcC) it parsed at open.
bool same_stream(const AVCodecParameters* a, const AVCodecParameters* b) {
  return a->codec_type == b->codec_type && a->codec_id == b->codec_id && a->codec_tag == b->codec_tag &&
         a->format == b->format && a->profile == b->profile && a->level == b->level && a->width == b->width &&
         a->height == b->height && same_rational(a->sample_aspect_ratio, b->sample_aspect_ratio) &&
         a->field_order == b->field_order && a->color_range == b->color_range &&
         a->color_primaries == b->color_primaries && a->color_trc == b->color_trc &&
         a->color_space == b->color_space && a->chroma_location == b->chroma_location &&
         a->video_delay == b->video_delay && a->bits_per_coded_sample == b->bits_per_coded_sample &&
         a->bits_per_raw_sample == b->bits_per_raw_sample && same_extradata(*a, *b);
}

}  // namespace

bool DecoderSetup::operator==(const DecoderSetup& o) const {
  return same_rational(packet_time_base, o.packet_time_base) && threads == o.threads &&
         thread_type == o.thread_type && flags == o.flags && cuda_device == o.cuda_device &&
         extra_hw_frames == o.extra_hw_frames;
}

KeptDecoder::~KeptDecoder() { avcodec_parameters_free(&stream_); }

CodecContextPtr KeptDecoder::take(const AVCodecParameters* stream, const DecoderSetup& setup) {
  std::lock_guard lock(mutex_);
  if (!decoder_ || !(setup_ == setup) || !same_stream(stream_, stream)) return nullptr;
  ++reuses_;
  return std::move(decoder_);
}

void KeptDecoder::keep(CodecContextPtr decoder, const AVCodecParameters* stream, const DecoderSetup& setup) {
  // Drops the reference frames and any picture still inside, and ends the
  // draining state: what a new stream's first keyframe needs.
  avcodec_flush_buffers(decoder.get());
  AVCodecParameters* copy = avcodec_parameters_alloc();
  if (!copy || avcodec_parameters_copy(copy, stream) < 0) {
    avcodec_parameters_free(&copy);
    throw std::bad_alloc();
  }
  CodecContextPtr replaced;  // freed outside the lock: NVDEC's teardown takes 0.1 s
  {
    std::lock_guard lock(mutex_);
    replaced = std::move(decoder_);
    decoder_ = std::move(decoder);
    avcodec_parameters_free(&stream_);
    stream_ = copy;
    setup_ = setup;
  }
}

int64_t KeptDecoder::reuses() const {
  std::lock_guard lock(mutex_);
  return reuses_;
}

}  // namespace sp
