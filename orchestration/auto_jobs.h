#pragma once
// `--jobs auto`: how many workers a segment-parallel run gets, from what the
// host has and how long the input is. Measured on 2 x H100 with 32 cores
// (docs/perf.md): one GPU with 4 workers already feeds libx264 ultrafast as
// fast as 32 cores encode it at 1080p; a worker's start costs 0.5-0.8 s.
#include <string>

namespace sp {

struct AutoJobsHost {
  int gpus = 0;  // the GPUs the run uses; 0: the CPU backend
  int cores = 1;
  double input_seconds = -1;  // -1: unknown
  bool temporal = false;      // a temporal stage starts cold in every segment
};

struct AutoJobs {
  int jobs = 1;     // 1: a single run, no segments
  std::string why;  // "4 workers: 2 GPUs x 4, 32 cores / 8, 60 s / 20 s"
};

AutoJobs choose_jobs(const AutoJobsHost& host);

// The workers an input of this length is worth by its length alone (each
// worker's start stays a few percent of its segment); at least 1. A batch
// cuts the clips worth 2 or more.
int workers_for_length(double input_seconds, bool temporal);

// The input's duration: its container header's where it has one, else from
// probing its streams (which decodes a few frames); -1 where neither says.
// Throws sp::Error for a file that cannot be opened.
double probe_input_seconds(const std::string& path);

}  // namespace sp
