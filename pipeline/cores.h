#pragma once
// How many cores this process may use, for its thread counts and `--jobs
// auto`. std::thread::hardware_concurrency counts the machine's: under
// `taskset`, a Slurm job's cpuset or a container's CPU quota that would give
// every encoder and pool threads for cores the process cannot run on.
#include <optional>
#include <string_view>

namespace sp {

// The CPUs of the calling thread's affinity mask (taskset, cpusets), no more
// than the whole cores its cgroup's CPU quota allows (cgroup v2 `cpu.max`,
// rounded up; docker --cpus, systemd CPUQuota); at least 1.
int usable_cores();

// Threads for each of `jobs` encoders (or decoders) side by side: 1.5 times
// its share of the usable cores, x264's own rule for one encoder; at least 1.
int threads_each(int jobs);

// The whole cores a cgroup v2 `cpu.max` ("QUOTA PERIOD", or "max PERIOD" for
// none) is worth, rounded up; nullopt for no limit or text that does not parse.
std::optional<int> cores_of_cpu_max(std::string_view text);

}  // namespace sp
