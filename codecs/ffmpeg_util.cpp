#include "codecs/ffmpeg_util.h"

extern "C" {
#include <libavutil/hwcontext.h>
}

#include <fcntl.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdarg>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <map>
#include <mutex>
#include <utility>

#include "pipeline/device.h"
#include "pipeline/log.h"

namespace sp {

std::string av_error_text(int errnum) {
  char buffer[AV_ERROR_MAX_STRING_SIZE] = {};
  av_strerror(errnum, buffer, sizeof(buffer));
  return buffer;
}

FramePtr make_frame() {
  FramePtr f(av_frame_alloc());
  if (!f) throw std::bad_alloc();
  return f;
}

PacketPtr make_packet() {
  PacketPtr p(av_packet_alloc());
  if (!p) throw std::bad_alloc();
  return p;
}

bool same_extradata(const AVCodecParameters& a, const AVCodecParameters& b) {
  return a.extradata_size == b.extradata_size &&
         (a.extradata_size == 0 || std::memcmp(a.extradata, b.extradata, size_t(a.extradata_size)) == 0);
}

AVPixelFormat to_av(PixelFormat format) {
  switch (format) {
    case PixelFormat::rgba: return AV_PIX_FMT_RGBA;
    case PixelFormat::bgr0: return AV_PIX_FMT_BGR0;
    case PixelFormat::rgb24: return AV_PIX_FMT_RGB24;
    case PixelFormat::gray: return AV_PIX_FMT_GRAY8;
    case PixelFormat::yuv420p: return AV_PIX_FMT_YUV420P;
    case PixelFormat::yuv444p: return AV_PIX_FMT_YUV444P;
    case PixelFormat::nv12: return AV_PIX_FMT_NV12;
    case PixelFormat::p010: return AV_PIX_FMT_P010LE;
  }
  return AV_PIX_FMT_NONE;
}

std::optional<PixelFormat> from_av_exact(AVPixelFormat format) {
  switch (format) {
    case AV_PIX_FMT_RGBA: return PixelFormat::rgba;
    case AV_PIX_FMT_BGR0: return PixelFormat::bgr0;
    case AV_PIX_FMT_RGB24: return PixelFormat::rgb24;
    case AV_PIX_FMT_GRAY8: return PixelFormat::gray;
    case AV_PIX_FMT_YUV420P:
    case AV_PIX_FMT_YUVJ420P: return PixelFormat::yuv420p;
    case AV_PIX_FMT_YUV444P:
    case AV_PIX_FMT_YUVJ444P: return PixelFormat::yuv444p;
    case AV_PIX_FMT_NV12: return PixelFormat::nv12;
    case AV_PIX_FMT_P010LE: return PixelFormat::p010;
    default: return std::nullopt;
  }
}

PixelFormat nearest_supported(AVPixelFormat format) {
  if (auto exact = from_av_exact(format)) return *exact;
  const AVPixFmtDescriptor* d = av_pix_fmt_desc_get(format);
  if (!d) return PixelFormat::rgba;
  const bool alpha = (d->flags & (AV_PIX_FMT_FLAG_ALPHA | AV_PIX_FMT_FLAG_PAL)) != 0;
  if ((d->flags & (AV_PIX_FMT_FLAG_RGB | AV_PIX_FMT_FLAG_PAL | AV_PIX_FMT_FLAG_BAYER)) ||
      format == AV_PIX_FMT_XYZ12LE || format == AV_PIX_FMT_XYZ12BE)
    return alpha ? PixelFormat::rgba : PixelFormat::rgb24;
  if (d->nb_components <= 2) return alpha ? PixelFormat::rgba : PixelFormat::gray;  // gray, gray + alpha
  const int depth = d->comp[0].depth;
  const bool chroma_420_or_less = d->log2_chroma_w >= 1 && d->log2_chroma_h >= 1;
  const bool chroma_horizontal_only = d->log2_chroma_h == 0;
  if (chroma_420_or_less || (d->log2_chroma_w >= 2 && chroma_horizontal_only))  // 4:2:0, 4:1:0, 4:1:1
    return depth > 8 ? PixelFormat::p010 : PixelFormat::yuv420p;
  return PixelFormat::yuv444p;  // 4:2:2, 4:4:0, 4:4:4 at any depth: keep every chroma sample
}

bool is_jpeg_range_format(AVPixelFormat format) {
  switch (format) {
    case AV_PIX_FMT_YUVJ420P:
    case AV_PIX_FMT_YUVJ422P:
    case AV_PIX_FMT_YUVJ444P:
    case AV_PIX_FMT_YUVJ440P:
    case AV_PIX_FMT_YUVJ411P: return true;
    default: return false;
  }
}

bool is_rgb(PixelFormat format) {
  return format == PixelFormat::rgba || format == PixelFormat::bgr0 || format == PixelFormat::rgb24;
}

std::optional<PixelFormat> parse_pixel_format_name(const std::string& name) {
  for (PixelFormat f : {PixelFormat::rgba, PixelFormat::bgr0, PixelFormat::rgb24, PixelFormat::gray,
                        PixelFormat::yuv420p, PixelFormat::yuv444p, PixelFormat::nv12, PixelFormat::p010})
    if (name == to_string(f)) return f;
  return std::nullopt;
}

std::optional<ColorMatrix> matrix_from_av(AVColorSpace space) {
  switch (space) {
    case AVCOL_SPC_BT709:
    case AVCOL_SPC_SMPTE240M: return ColorMatrix::bt709;  // 240M differs from 709 in the 4th decimal
    case AVCOL_SPC_BT470BG:
    case AVCOL_SPC_SMPTE170M:
    case AVCOL_SPC_FCC: return ColorMatrix::bt601;
    case AVCOL_SPC_BT2020_NCL:
    case AVCOL_SPC_BT2020_CL: return ColorMatrix::bt2020;
    default: return std::nullopt;
  }
}

ColorSpec color_from_tags(AVColorSpace space, AVColorRange range, AVPixelFormat decoded_format, int height) {
  ColorSpec c;
  const AVPixFmtDescriptor* d = av_pix_fmt_desc_get(decoded_format);
  const bool rgb_like = d && (d->flags & (AV_PIX_FMT_FLAG_RGB | AV_PIX_FMT_FLAG_PAL));
  const bool gray = d && !rgb_like && d->nb_components <= 2;
  const bool jpeg = is_jpeg_range_format(decoded_format);
  if (auto m = matrix_from_av(space)) {
    c.matrix = *m;
  } else {
    c.matrix = (jpeg || height <= 576) ? ColorMatrix::bt601 : ColorMatrix::bt709;
  }
  if (range == AVCOL_RANGE_JPEG || jpeg || rgb_like) {
    c.range = ColorRange::full;
  } else if (range == AVCOL_RANGE_MPEG) {
    c.range = ColorRange::limited;
  } else {
    c.range = gray ? ColorRange::full : ColorRange::limited;
  }
  return c;
}

AVColorSpace to_av_space(ColorMatrix matrix, int height) {
  switch (matrix) {
    case ColorMatrix::bt601: return height == 576 ? AVCOL_SPC_BT470BG : AVCOL_SPC_SMPTE170M;
    case ColorMatrix::bt709: return AVCOL_SPC_BT709;
    case ColorMatrix::bt2020: return AVCOL_SPC_BT2020_NCL;
  }
  return AVCOL_SPC_UNSPECIFIED;
}

AVColorRange to_av_range(ColorRange range) { return range == ColorRange::full ? AVCOL_RANGE_JPEG : AVCOL_RANGE_MPEG; }

const char* to_string(ColorMatrix matrix) {
  switch (matrix) {
    case ColorMatrix::bt601: return "bt601";
    case ColorMatrix::bt709: return "bt709";
    case ColorMatrix::bt2020: return "bt2020";
  }
  return "?";
}

const char* to_string(ColorRange range) { return range == ColorRange::full ? "full" : "limited"; }

// ---- log capture ----

namespace {

std::mutex g_watch_mutex;
std::map<const void*, FfmpegLogWatch*>& watched() {
  static std::map<const void*, FfmpegLogWatch*> m;
  return m;
}

void ffmpeg_log_callback(void* avcl, int level, const char* fmt, va_list vl) {
  if (level > AV_LOG_INFO) return;
  thread_local std::string pending;
  thread_local int pending_level = AV_LOG_INFO;
  thread_local const void* pending_context = nullptr;
  char text[1024];
  va_list copy;
  va_copy(copy, vl);
  std::vsnprintf(text, sizeof(text), fmt, copy);
  va_end(copy);
  if (pending.empty()) {
    pending_level = level;
    pending_context = avcl;
    if (avcl) {
      const AVClass* cls = *static_cast<const AVClass* const*>(avcl);
      if (cls && cls->item_name) pending = std::string("[") + cls->item_name(avcl) + "] ";
    }
  }
  pending += text;
  if (pending.empty() || pending.back() != '\n') return;
  pending.pop_back();
  const std::string line = std::move(pending);
  pending.clear();
  log_debug("ffmpeg: {}", line);
  if (pending_level <= AV_LOG_ERROR && pending_context) {
    // Frame threads log through copies of the codec context; the copies keep
    // `opaque`, which a watched decoder points at its main context.
    const void* key = pending_context;
    const AVClass* cls = *static_cast<const AVClass* const*>(pending_context);
    if (cls == avcodec_get_class()) {
      const void* owner = static_cast<const AVCodecContext*>(pending_context)->opaque;
      if (owner) key = owner;
    }
    std::lock_guard lock(g_watch_mutex);
    auto it = watched().find(key);
    if (it != watched().end()) it->second->record(line);
  }
}

}  // namespace

void install_ffmpeg_log() {
  static std::once_flag once;
  std::call_once(once, [] { av_log_set_callback(ffmpeg_log_callback); });
}

struct FfmpegLogWatch::State {
  std::vector<const void*> contexts;
  std::vector<std::string> errors;
  std::string last;
};

FfmpegLogWatch::FfmpegLogWatch() : state_(std::make_unique<State>()) { install_ffmpeg_log(); }

FfmpegLogWatch::~FfmpegLogWatch() {
  std::lock_guard lock(g_watch_mutex);
  for (const void* c : state_->contexts) {
    auto it = watched().find(c);
    if (it != watched().end() && it->second == this) watched().erase(it);
  }
}

void FfmpegLogWatch::watch(const void* context) {
  std::lock_guard lock(g_watch_mutex);
  watched()[context] = this;
  state_->contexts.push_back(context);
}

// Called with g_watch_mutex held.
void FfmpegLogWatch::record(const std::string& line) {
  if (state_->errors.size() < 64) state_->errors.push_back(line);
  state_->last = line;
}

std::vector<std::string> FfmpegLogWatch::take_errors() {
  std::lock_guard lock(g_watch_mutex);
  return std::exchange(state_->errors, {});
}

std::string FfmpegLogWatch::last_error() const {
  std::lock_guard lock(g_watch_mutex);
  return state_->last;
}

void grow_pipe(int fd, size_t bytes) {
  struct stat st {};
  if (fstat(fd, &st) != 0 || !S_ISFIFO(st.st_mode)) return;
  // Beyond pipe-max-size takes CAP_SYS_RESOURCE: ask for all, then for the cap.
  const int want = int(std::min(bytes, size_t(1) << 30));
  int got = fcntl(fd, F_SETPIPE_SZ, want);
  if (got < 0) {
    size_t limit = 1 << 20;
    std::ifstream("/proc/sys/fs/pipe-max-size") >> limit;
    got = fcntl(fd, F_SETPIPE_SZ, int(std::min(size_t(want), limit)));
  }
  if (got < 0) log_debug("cannot grow the pipe on fd {} to {} bytes", fd, want);
  else log_debug("pipe on fd {} holds {} bytes", fd, got);
}

std::string strip_log_prefix(const std::string& line) {
  if (!line.empty() && line[0] == '[') {
    const size_t close = line.find("] ");
    if (close != std::string::npos) return line.substr(close + 2);
  }
  return line;
}

int create_shared_cuda_device(AVBufferRef** device) {
  AVDictionary* options = nullptr;
  av_dict_set(&options, "primary_ctx", "1", 0);
  // The calling thread's device: a run on GPU N decodes and encodes there.
  const std::string ordinal = std::to_string(current_cuda_device());
  const int r = av_hwdevice_ctx_create(device, AV_HWDEVICE_TYPE_CUDA, ordinal.c_str(), options, 0);
  av_dict_free(&options);
  return r;
}

}  // namespace sp
