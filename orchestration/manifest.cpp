#include "orchestration/manifest.h"

extern "C" {
#include <libavutil/hash.h>
}

#include <fmt/format.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <vector>

#include "codecs/muxer.h"
#include "pipeline/errors.h"
#include "pipeline/whole_file.h"

namespace sp {
namespace {

constexpr int64_t kEndSpan = 1 << 20;
constexpr int64_t kSampleSpan = 1 << 16;
constexpr int kSamples = 16;

std::string hex(const uint8_t* bytes, int n) {
  std::string out;
  for (int i = 0; i < n; ++i) out += fmt::format("{:02x}", bytes[i]);
  return out;
}

nlohmann::json optional_pts(const std::optional<int64_t>& v) { return v ? nlohmann::json(*v) : nlohmann::json(); }

std::optional<int64_t> optional_pts(const nlohmann::json& j, const char* key) {
  if (!j.contains(key) || j.at(key).is_null()) return std::nullopt;
  return j.at(key).get<int64_t>();
}

}  // namespace

InputFingerprint fingerprint_file(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) throw Error(ExitCode::no_input, path + ": cannot read the input");
  InputFingerprint f;
  f.size_bytes = int64_t(st.st_size);
  f.mtime_ns = int64_t(st.st_mtim.tv_sec) * 1000000000 + st.st_mtim.tv_nsec;
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(ExitCode::no_input, path + ": cannot read the input");
  AVHashContext* raw = nullptr;
  if (av_hash_alloc(&raw, "SHA256") < 0) throw std::bad_alloc();
  std::unique_ptr<AVHashContext, void (*)(AVHashContext*)> hash(raw, [](AVHashContext* h) { av_hash_freep(&h); });
  av_hash_init(hash.get());
  std::vector<char> buffer(static_cast<size_t>(kEndSpan));
  auto add_span = [&](int64_t offset, int64_t length) {
    length = std::min(length, f.size_bytes - offset);
    if (length <= 0) return;
    in.seekg(offset);
    in.read(buffer.data(), std::streamsize(length));
    if (in.gcount() != std::streamsize(length)) throw Error(ExitCode::no_input, path + ": cannot read the input");
    av_hash_update(hash.get(), reinterpret_cast<const uint8_t*>(buffer.data()), size_t(length));
  };
  add_span(0, kEndSpan);
  for (int i = 1; i <= kSamples; ++i) add_span(f.size_bytes / (kSamples + 1) * i, kSampleSpan);
  add_span(std::max<int64_t>(0, f.size_bytes - kEndSpan), kEndSpan);
  uint8_t digest[AV_HASH_MAX_SIZE];
  av_hash_final(hash.get(), digest);
  f.sampled_sha256 = hex(digest, av_hash_get_size(hash.get()));
  return f;
}

nlohmann::json Manifest::to_json() const {
  nlohmann::json segs = nlohmann::json::array();
  for (const SegmentPlan& s : segments)
    segs.push_back({{"index", s.index},
                    {"begin_pts", optional_pts(s.begin_pts)},
                    {"end_pts", optional_pts(s.end_pts)},
                    {"seek_pts", optional_pts(s.seek_pts)},
                    {"begin_seconds", s.begin_seconds},
                    {"end_seconds", s.end_seconds},
                    {"file", s.file}});
  return {{"stylepipe_manifest", kVersion},
          {"plan_id", plan_id},
          {"workdir", workdir},
          {"input",
           {{"path", input_path},
            {"size_bytes", input_fingerprint.size_bytes},
            {"mtime_ns", input_fingerprint.mtime_ns},
            {"sampled_sha256", input_fingerprint.sampled_sha256},
            {"video_stream", video_stream},
            {"time_base", {time_base.num, time_base.den}},
            {"duration_seconds", input_duration_seconds},
            {"keyframe_source", keyframe_source}}},
          {"config", {{"path", config_path}, {"text", config_text}}},
          {"output",
           {{"path", output.path},
            {"format", output.format},
            {"codec", output.codec},
            {"crf", output.crf},
            {"preset", output.preset},
            {"pixel_format", output.pixel_format},
            {"overwrite", output.overwrite}}},
          {"workers", {{"backend", backend}, {"hwdec", hwdec}, {"encoder", encoder}}},
          {"warmup_frames", warmup_frames},
          {"segments", segs}};
}

Manifest Manifest::from_json(const nlohmann::json& j, const std::string& path) {
  try {
    if (!j.contains("stylepipe_manifest") || j.at("stylepipe_manifest").get<int>() != kVersion)
      throw Error(ExitCode::data_error, fmt::format("{}: not a stylepipe manifest of version {}", path, kVersion));
    Manifest m;
    m.path = path;
    m.plan_id = j.at("plan_id").get<std::string>();
    m.workdir = j.at("workdir").get<std::string>();
    const auto& in = j.at("input");
    m.input_path = in.at("path").get<std::string>();
    m.input_fingerprint = {in.at("size_bytes").get<int64_t>(), in.at("mtime_ns").get<int64_t>(),
                           in.at("sampled_sha256").get<std::string>()};
    m.video_stream = in.at("video_stream").get<int>();
    m.time_base = {in.at("time_base").at(0).get<int>(), in.at("time_base").at(1).get<int>()};
    m.input_duration_seconds = in.at("duration_seconds").get<double>();
    m.keyframe_source = in.at("keyframe_source").get<std::string>();
    m.config_path = j.at("config").at("path").get<std::string>();
    m.config_text = j.at("config").at("text").get<std::string>();
    const auto& out = j.at("output");
    m.output = {out.at("path").get<std::string>(),   out.at("format").get<std::string>(),
                out.at("codec").get<std::string>(),  out.at("preset").get<std::string>(),
                out.at("pixel_format").get<std::string>(), out.at("crf").get<int>(),
                out.at("overwrite").get<bool>()};
    m.backend = j.at("workers").at("backend").get<std::string>();
    m.hwdec = j.at("workers").at("hwdec").get<std::string>();
    m.encoder = j.at("workers").at("encoder").get<std::string>();
    m.warmup_frames = j.at("warmup_frames").get<int>();
    for (const auto& s : j.at("segments")) {
      SegmentPlan p;
      p.index = s.at("index").get<int>();
      p.begin_pts = optional_pts(s, "begin_pts");
      p.end_pts = optional_pts(s, "end_pts");
      p.seek_pts = optional_pts(s, "seek_pts");
      p.begin_seconds = s.at("begin_seconds").get<double>();
      p.end_seconds = s.at("end_seconds").get<double>();
      p.file = s.at("file").get<std::string>();
      if (p.index != int(m.segments.size()))
        throw Error(ExitCode::data_error, fmt::format("{}: segment {} is listed as index {}", path, m.segments.size(), p.index));
      m.segments.push_back(std::move(p));
    }
    if (m.segments.empty()) throw Error(ExitCode::data_error, path + ": the manifest has no segments");
    return m;
  } catch (const nlohmann::json::exception& e) {
    throw Error(ExitCode::data_error, fmt::format("{}: not a valid stylepipe manifest ({})", path, e.what()));
  }
}

std::string Manifest::segment_path(int index) const {
  return (std::filesystem::path(workdir) / segments.at(size_t(index)).file).string();
}

std::string Manifest::partial_segment_path(int index) const { return segment_path(index) + ".partial"; }

std::string Manifest::writing_segment_path(int index) const { return temporary_output_path(partial_segment_path(index)); }

std::string Manifest::segment_stats_path(int index) const {
  return (std::filesystem::path(workdir) / fmt::format("segment_{:04}.stats.json", index)).string();
}

void write_manifest(const Manifest& m, const std::string& path) {
  const std::string temporary = path + ".partial";
  {
    std::ofstream out(temporary);
    out << m.to_json().dump(2) << "\n";
    if (!out.flush()) throw Error(ExitCode::io_error, temporary + ": cannot write the manifest");
  }
  std::error_code ec;
  std::filesystem::rename(temporary, path, ec);
  if (ec) throw Error(ExitCode::io_error, path + ": cannot write the manifest (" + ec.message() + ")");
}

Manifest read_manifest(const std::string& path) {
  std::string why;
  const std::optional<std::string> text = read_whole_file(path, &why);
  if (!text) throw Error(ExitCode::no_input, path + ": cannot open the manifest (" + why + ")");
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(*text);
  } catch (const nlohmann::json::parse_error& e) {
    throw Error(ExitCode::data_error, fmt::format("{}: not JSON ({})", path, e.what()));
  }
  return Manifest::from_json(j, path);
}

void check_input_unchanged(const Manifest& m) {
  const InputFingerprint now = fingerprint_file(m.input_path);
  if (now.same_content(m.input_fingerprint)) return;
  std::string what = now.size_bytes != m.input_fingerprint.size_bytes
                         ? fmt::format("its size is {} bytes, the plan has {}", now.size_bytes, m.input_fingerprint.size_bytes)
                     : "its content differs";
  throw Error(ExitCode::data_error,
              fmt::format("{}: the input changed since the plan {} was made ({}); plan again", m.input_path, m.path, what));
}

}  // namespace sp
