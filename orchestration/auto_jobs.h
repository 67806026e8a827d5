#pragma once
// `--jobs auto`: how many workers a segment-parallel run gets, from what the
// host has, how long the input is and how much warm-up the chain needs at
// each seam. Measured on 2 x H100 with 32 cores (docs/perf.md): one GPU with
// 4 workers already feeds libx264 ultrafast as fast as 32 cores encode it at
// 1080p. Workers start side by side, so their start-up is paid once; what
// each more segment costs is its warm-up (session 27: a 40 s pencil clip
// was fastest with 2-4 workers, 10-20 s a worker).
#include <string>

#include "pipeline/stage.h"

namespace sp {

struct AutoJobsHost {
  int gpus = 0;  // the GPUs the run uses; 0: the CPU backend
  int cores = 1;
  double input_seconds = -1;  // -1: unknown
  // The input each segment after the first decodes and runs before its own
  // frames (the chain's warm-up), in seconds: segments stay long enough that
  // it is a small share of them.
  double warmup_seconds = 0;
  // A batch: how many clips (0: one input). Its clips run side by side, so
  // their number bounds the workers instead of the input's length.
  int clips = 0;
  // What a warm-up frame costs the busiest resource, as a share of a frame
  // the run encodes (sp::warmup_weight): below 1 where the encoders are the
  // limit and the warm-up takes only GPU time they leave idle.
  double warmup_weight = 1;
  // The chain bounds no GPU time a frame (halftone, pencil's lu2012): over
  // several GPUs it counts as GPU-bound, one worker a GPU.
  bool gpu_time_unknown = false;
};

struct AutoJobs {
  int jobs = 1;     // 1: a single run, no segments (a batch: clips at a time)
  std::string why;  // "4 workers: 1 GPU x 4, 32 cores / 8, 40 s / 10 s a worker (warm-up 0.47 s)"
};

// The workers for a run: at most four a GPU (a batch: eight clips; over
// several GPUs one, for a chain of unbounded GPU time), one per
// 8 cores (2 a batch's clip, 16 on the CPU backend), and the workers the
// input's length is worth (workers_for_length). With several GPUs, one
// input: up to one worker a GPU as its length's floor allows, and more
// workers than GPUs only in a multiple of them.
AutoJobs choose_jobs(const AutoJobsHost& host);

// The input a worker is given at least: 10 s, or 20 times the warm-up (which
// then stays within 5% of the work), its seconds weighed by their cost
// (AutoJobsHost::warmup_weight) where that is known.
double seconds_per_worker(double warmup_seconds);

// The workers an input of this length is worth by its length alone; at least
// 1. A batch cuts the clips worth 2 or more.
int workers_for_length(double input_seconds, double warmup_seconds);

struct InputLength {
  double seconds = -1;     // -1 where neither header nor streams say
  double frame_rate = 0;   // the video's average, 0 where the header does not say
  Size size;               // the video's, {0, 0} where the header does not say
  std::string codec{};     // the video's, as FFmpeg names it ("h264"); empty where there is none
};

// The input's duration, frame rate and picture size: its container header's where it gives
// the duration, else from probing its streams (which decodes a few frames).
// Throws sp::Error for a file that cannot be opened.
InputLength probe_input_length(const std::string& path);

// The chain's warm-up in seconds of an input at this frame rate (30 fps where
// unknown: the warm-up frames then count as at 30 fps).
double warmup_seconds_at(const Warmup& warmup, double frame_rate);

}  // namespace sp
