// H.264 as MP4 (and Matroska) stores it, made by us, against the oracle of
// FFmpeg's own muxers (which convert Annex B themselves) read back by its
// demuxers: the avcC record and every packet's bytes.
#include "codecs/h264_in_mp4.h"

#include <gtest/gtest.h>

#include <random>
#include <string>
#include <vector>

#include "codecs/ffmpeg_util.h"
#include "tests/e2e_util.h"
#include "tests/support/test_support.h"

namespace sp::test {
namespace {

using Bytes = std::vector<uint8_t>;

struct Stored {
  Bytes extradata;
  std::vector<Bytes> packets;  // in file order
  AVCodecParameters* parameters = nullptr;
  ~Stored() { avcodec_parameters_free(&parameters); }
};

// The video's extradata, parameters and packets, as FFmpeg's demuxer reads them.
void read_video(const std::string& path, Stored* stored) {
  AVFormatContext* in = nullptr;
  ASSERT_GE(avformat_open_input(&in, path.c_str(), nullptr, nullptr), 0) << path;
  const int video = av_find_best_stream(in, AVMEDIA_TYPE_VIDEO, -1, -1, nullptr, 0);
  ASSERT_GE(video, 0);
  const AVCodecParameters* p = in->streams[video]->codecpar;
  stored->extradata.assign(p->extradata, p->extradata + p->extradata_size);
  stored->parameters = avcodec_parameters_alloc();
  avcodec_parameters_copy(stored->parameters, p);
  PacketPtr packet = make_packet();
  while (av_read_frame(in, packet.get()) >= 0) {
    if (packet->stream_index == video) stored->packets.emplace_back(packet->data, packet->data + packet->size);
    av_packet_unref(packet.get());
  }
  avformat_close_input(&in);
}

Bytes converted(const Bytes& annex_b) {
  PacketPtr packet = make_packet();
  EXPECT_EQ(av_new_packet(packet.get(), int(annex_b.size())), 0);
  std::copy(annex_b.begin(), annex_b.end(), packet->data);
  packet->pts = 7;
  annex_b_to_length_prefixed(packet.get());
  EXPECT_EQ(packet->pts, 7) << "timestamps stay";
  return Bytes(packet->data, packet->data + packet->size);
}

// x264 at random settings (slices: several NAL units a frame; B-frames; the
// first packet's SEI), in NUT, which keeps Annex B as the encoder wrote it.
std::string x264_in_nut(const TempDir& dir, std::mt19937_64& rng) {
  const char* presets[] = {"ultrafast", "veryfast", "medium"};
  const std::string nut = dir.file("x264.nut");
  const std::string command = "-f lavfi -i testsrc2=size=" + std::to_string(64 + 16 * int(rng() % 20)) + "x" +
                              std::to_string(48 + 16 * int(rng() % 12)) + ":rate=25 -frames:v " +
                              std::to_string(8 + rng() % 24) + " -c:v libx264 -preset " + presets[rng() % 3] +
                              " -bf " + std::to_string(rng() % 4) + " -x264-params slices=" +
                              std::to_string(1 + rng() % 4) + " -pix_fmt yuv420p " + shell_quote(nut);
  EXPECT_EQ(ffmpeg(command).exit_code, 0) << command;
  return nut;
}

TEST(H264InMp4, X264PacketsAndRecordAreWhatFfmpegsMuxerStores) {
  std::mt19937_64 rng(fresh_seed());
  for (int round = 0; round < 3; ++round) {
    TempDir dir;
    const std::string nut = x264_in_nut(dir, rng);
    Stored annex_b;
    read_video(nut, &annex_b);
    ASSERT_TRUE(is_annex_b_h264(*annex_b.parameters));
    // Matroska's muxer converts as MP4's does, and stores the same record.
    for (const char* container : {"mp4", "mkv"}) {
      const std::string out = dir.file(std::string("oracle.") + container);
      ASSERT_EQ(ffmpeg("-i " + shell_quote(nut) + " -c copy " + shell_quote(out)).exit_code, 0);
      Stored oracle;
      read_video(out, &oracle);
      EXPECT_FALSE(is_annex_b_h264(*oracle.parameters)) << container << ": its extradata is an avcC record";
      EXPECT_EQ(avcc_record(*annex_b.parameters), oracle.extradata) << container;
      ASSERT_EQ(annex_b.packets.size(), oracle.packets.size()) << container;
      for (size_t i = 0; i < annex_b.packets.size(); ++i)
        ASSERT_EQ(converted(annex_b.packets[i]), oracle.packets[i]) << container << ", packet " << i;
    }
  }
}

// Muxes `packets` as H.264 with Annex B extradata into MP4 through FFmpeg's muxer.
void mux_as_mp4(const AVCodecParameters& parameters, const std::vector<Bytes>& packets, const std::string& path) {
  AVFormatContext* out = nullptr;
  ASSERT_GE(avformat_alloc_output_context2(&out, nullptr, "mp4", path.c_str()), 0);
  AVStream* stream = avformat_new_stream(out, nullptr);
  avcodec_parameters_copy(stream->codecpar, &parameters);
  stream->codecpar->codec_tag = 0;
  stream->time_base = {1, 25};
  ASSERT_GE(avio_open(&out->pb, path.c_str(), AVIO_FLAG_WRITE), 0);
  ASSERT_GE(avformat_write_header(out, nullptr), 0);
  for (size_t i = 0; i < packets.size(); ++i) {
    PacketPtr packet = make_packet();
    ASSERT_EQ(av_new_packet(packet.get(), int(packets[i].size())), 0);
    std::copy(packets[i].begin(), packets[i].end(), packet->data);
    packet->pts = packet->dts = int64_t(i);
    packet->duration = 1;
    packet->flags = i == 0 ? AV_PKT_FLAG_KEY : 0;
    ASSERT_GE(av_write_frame(out, packet.get()), 0);
  }
  ASSERT_GE(av_write_trailer(out), 0);
  avio_closep(&out->pb);
  avformat_free_context(out);
}

// Bytes that look like Annex B to a scanner and to nothing else: start codes
// of 3 and 4 bytes, runs of zeros before them and after NAL units, a start
// code in the last three bytes, and payload bytes that are often 0 or 1.
Bytes tricky_packet(std::mt19937_64& rng) {
  Bytes bytes;
  if (rng() % 4 == 0) bytes.insert(bytes.end(), 1 + rng() % 3, 0x00);  // leading zeros, or garbage first
  if (rng() % 5 == 0) bytes.push_back(uint8_t(1 + rng() % 255));
  const int units = 1 + int(rng() % 5);
  for (int u = 0; u < units; ++u) {
    bytes.insert(bytes.end(), 2 + rng() % 3, 0x00);
    bytes.push_back(0x01);
    bytes.push_back(uint8_t(1 + rng() % 255));  // a NAL header is never zero
    const int payload = int(rng() % 40);
    for (int i = 0; i < payload; ++i) {
      const int kind = int(rng() % 8);
      bytes.push_back(kind < 3 ? 0x00 : kind == 3 ? 0x01 : uint8_t(rng()));
    }
    if (rng() % 4 == 0) bytes.insert(bytes.end(), 1 + rng() % 3, 0x00);  // trailing zeros
  }
  if (rng() % 6 == 0) bytes.insert(bytes.end(), {0x00, 0x00, 0x01});  // a start code that ends the packet
  return bytes;
}

TEST(H264InMp4, AnyBytesAreSplitAtStartCodesAsFfmpegsMuxerSplitsThem) {
  std::mt19937_64 rng(fresh_seed());
  TempDir dir;
  Stored annex_b;
  read_video(x264_in_nut(dir, rng), &annex_b);  // real SPS and PPS for the record
  std::vector<Bytes> packets;
  for (int i = 0; i < 400; ++i) packets.push_back(tricky_packet(rng));
  const std::string mp4 = dir.file("tricky.mp4");
  mux_as_mp4(*annex_b.parameters, packets, mp4);
  Stored oracle;
  const int log_level = av_log_get_level();
  av_log_set_level(AV_LOG_FATAL);  // the demuxer's parser says what it thinks of these bytes
  read_video(mp4, &oracle);
  av_log_set_level(log_level);
  ASSERT_EQ(oracle.packets.size(), packets.size());
  for (size_t i = 0; i < packets.size(); ++i) {
    const Bytes& in = packets[i];
    ASSERT_EQ(converted(in), oracle.packets[i]) << "packet " << i << " of " << in.size() << " bytes";
  }
}

}  // namespace
}  // namespace sp::test
