// Segment-parallel runs on the GPU: workers with their own contexts, pools and
// streams, spread over a device list. One GPU can still hold several workers
// (--devices 0,0); machines with more run the same code over each device.
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <map>
#include <random>
#include <set>

#include <nlohmann/json.hpp>

#include "pipeline/cores.h"
#include "pipeline/device.h"
#include "tests/e2e_util.h"
#include "tests/support/test_support.h"

namespace sp::test {
namespace {

// Runs (segments, clips) that name their worker's `device`: every GPU ran
// some, and each device's runs all ran on one physical GPU (PCI bus id, from
// the run's own stats), a different one for each device.
void expect_each_device_on_a_gpu_of_its_own(const nlohmann::json& runs, int gpus) {
  std::map<int, std::set<std::string>> buses;
  for (const auto& run : runs) {
    ASSERT_TRUE(run.contains("device")) << run.dump();
    buses[run["device"].get<int>()].insert(run["stats"]["cuda_device"]["pci_bus_id"].get<std::string>());
  }
  EXPECT_EQ(int(buses.size()), gpus) << "not every GPU ran something";
  std::set<std::string> distinct;
  for (const auto& [device, ids] : buses) {
    EXPECT_EQ(ids.size(), 1u) << "device " << device << "'s runs were on several GPUs";
    distinct.insert(ids.begin(), ids.end());
  }
  EXPECT_EQ(int(distinct.size()), gpus) << "two devices' runs were on one GPU";
}

// A clip of random length and keyframe spacing (keyframes enough for
// `min_keyframes` segments), and its single CPU run: the oracle.
struct ClipAndCpuRun {
  TempDir dir;
  std::string in = dir.file("in.mp4"), cpu = dir.file("cpu.mkv"), gpu = dir.file("gpu.mkv"), stats = dir.file("stats.json");
  std::string config = source_dir() + "/configs/example.yaml";

  void make(int min_keyframes = 4) {
    std::mt19937_64 rng(fresh_seed());
    const int seconds = 4 + int(rng() % 4);
    const int longest_gop = std::max(2, 30 * seconds / min_keyframes);
    const CommandResult made = run_command("ffmpeg -hide_banner -v error -y -f lavfi -i testsrc2=size=640x360:rate=30 "
                                           "-f lavfi -i sine -t " + std::to_string(seconds) +
                                           " -c:v libx264 -g " + std::to_string(longest_gop / 2 + int(rng() % (longest_gop / 2 + 1))) +
                                           " -pix_fmt yuv420p -c:a aac " + in);
    ASSERT_EQ(made.exit_code, 0) << made.output;
    const CommandResult r = stylepipe("run " + config + " -i " + in + " -o " + cpu + " --backend cpu --codec ffv1");
    ASSERT_EQ(r.exit_code, 0) << r.output;
  }

  // A --jobs run on the GPU with `flags`, as threads or processes: the CPU
  // run's pictures and audio. Returns its stats.
  nlohmann::json run_on_gpu(const std::string& flags, const std::string& workers) {
    const CommandResult r = stylepipe("run " + config + " -i " + in + " -o " + gpu + " -y --backend cuda --codec ffv1 " +
                                      flags + " --stats-json " + stats +
                                      (workers == "processes" ? " --worker-processes" : ""));
    EXPECT_EQ(r.exit_code, 0) << r.output;
    EXPECT_EQ(video_md5s(gpu), video_md5s(cpu)) << "the GPU workers' pictures differ from the CPU run";
    EXPECT_EQ(audio_packet_hashes(gpu), audio_packet_hashes(cpu)) << "audio packets differ from the single run";
    std::ifstream s(stats);
    const nlohmann::json j = nlohmann::json::parse(s, nullptr, false);
    EXPECT_EQ(j["workers"], workers) << r.output;
    for (const auto& seg : j["segments"]) EXPECT_EQ(seg["stats"]["backend"]["name"], "cuda") << seg.dump();
    return j;
  }
};

TEST(SegmentsGpu, TwoWorkersOnOneGpuEqualTheCpuRun) {
  if (!cuda_device_available()) GTEST_SKIP() << "no CUDA device: the GPU workers are not exercised here";
  ClipAndCpuRun clip;
  ASSERT_NO_FATAL_FAILURE(clip.make());
  // Threads sharing one context (the default on one GPU), then a process with its own context each.
  for (const std::string workers : {"threads", "processes"}) {
    SCOPED_TRACE(workers);
    const nlohmann::json j = clip.run_on_gpu("--jobs 2 --devices 0,0 --segments 4", workers);
    ASSERT_EQ(j["segments"].size(), 4u);
    for (const auto& seg : j["segments"])
      EXPECT_GT(seg["stats"]["pool"]["high_water_bytes"].get<double>(), 0) << "each worker has its own pool";
    EXPECT_EQ(j["devices"], nlohmann::json::array({0, 0}));
  }
}

// Every GPU in one process: worker threads, each on its device (own context,
// pools, streams, NVDEC), give the CPU run's pictures, and each segment says
// where it ran. Machines with one GPU skip it; run it on a kind with 2 or 4.
TEST(SegmentsGpu, WorkerThreadsOnEveryGpuEqualTheCpuRun) {
  if (!cuda_device_available()) GTEST_SKIP() << "no CUDA device: the GPU workers are not exercised here";
  const int gpus = cuda_device_count();
  if (gpus < 2) GTEST_SKIP() << "one GPU here: workers on several GPUs need a machine with two or more";
  ClipAndCpuRun clip;
  ASSERT_NO_FATAL_FAILURE(clip.make(2 * gpus + 1));
  const int segments = 2 * gpus + 1;
  for (const std::string workers : {"threads", "processes"}) {
    SCOPED_TRACE(workers);
    const nlohmann::json j = clip.run_on_gpu("--jobs " + std::to_string(2 * gpus) + " --devices all --segments " +
                                                 std::to_string(segments), workers);
    ASSERT_EQ(int(j["segments"].size()), segments);
    expect_each_device_on_a_gpu_of_its_own(j["segments"], gpus);
  }
}

// A folder of clips over every GPU: worker threads, one per clip at a time,
// each on its device, give the CPU batch's pictures output by output.
TEST(SegmentsGpu, BatchOfClipsOnEveryGpuEqualsTheCpuBatch) {
  if (!cuda_device_available()) GTEST_SKIP() << "no CUDA device: the GPU workers are not exercised here";
  const int gpus = cuda_device_count();
  if (gpus < 2) GTEST_SKIP() << "one GPU here: a batch over several GPUs needs a machine with two or more";
  std::mt19937_64 rng(fresh_seed());
  TempDir dir;
  const int clips = 2 * gpus + 1;
  for (int k = 0; k < clips; ++k) {
    const CommandResult made = run_command(
        "ffmpeg -hide_banner -v error -y -f lavfi -i testsrc2=size=" + std::to_string(160 + 16 * int(rng() % 20)) + "x" +
        std::to_string(120 + 8 * int(rng() % 20)) + ":rate=30 -f lavfi -i sine -t " + std::to_string(1 + rng() % 2) +
        " -c:v libx264 -pix_fmt yuv420p -c:a aac " + dir.file("clip" + std::to_string(k) + ".mp4"));
    ASSERT_EQ(made.exit_code, 0) << made.output;
  }
  const std::string common = "run " + source_dir() + "/configs/example.yaml -i '" + dir.file("clip*.mp4") + "' --codec ffv1 ";
  CommandResult r = stylepipe(common + "-o '" + dir.file("{stem}_cpu.mkv") + "' --backend cpu --jobs 2");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string stats = dir.file("stats.json");
  r = stylepipe(common + "-o '" + dir.file("{stem}_gpu.mkv") + "' --backend cuda --devices all --jobs " +
                std::to_string(2 * gpus) + " --stats-json " + stats);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  for (int k = 0; k < clips; ++k) {
    const std::string stem = dir.file("clip" + std::to_string(k));
    EXPECT_EQ(video_md5s(stem + "_gpu.mkv"), video_md5s(stem + "_cpu.mkv")) << "clip " << k;
  }
  std::ifstream s(stats);
  const nlohmann::json j = nlohmann::json::parse(s);
  ASSERT_EQ(int(j["inputs"].size()), clips);
  expect_each_device_on_a_gpu_of_its_own(j["inputs"], gpus);
}

// `--devices 0,1` on a host of three GPUs or more: the driver starts only
// those two (each visible GPU adds to CUDA's start-up), and the run uses both.
TEST(SegmentsGpu, ADeviceListStartsOnlyTheGpusItNames) {
  if (!cuda_device_available()) GTEST_SKIP() << "no CUDA device: the GPU workers are not exercised here";
  const int gpus = cuda_device_count();
  if (gpus < 3) GTEST_SKIP() << "fewer than three GPUs here: a list of two would name them all";
  ClipAndCpuRun clip;
  ASSERT_NO_FATAL_FAILURE(clip.make());
  const CommandResult r = stylepipe("--log-level debug run " + clip.config + " -i " + clip.in + " -o " + clip.gpu +
                                    " -y --backend cuda --codec ffv1 --jobs 4 --devices 0,1 --segments 4 --stats-json " +
                                    clip.stats);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("CUDA: 2 devices visible"), std::string::npos) << r.output;
  EXPECT_EQ(video_md5s(clip.gpu), video_md5s(clip.cpu));
  std::ifstream s(clip.stats);
  const nlohmann::json j = nlohmann::json::parse(s);
  expect_each_device_on_a_gpu_of_its_own(j["segments"], 2);
  for (const auto& segment : j["segments"])
    EXPECT_EQ(segment["stats"]["cuda_device"]["pci_bus_id"], cuda_device_pci_bus_id(segment["device"].get<int>()))
        << "device " << segment["device"] << " is not the GPU of that ordinal";
}

// --jobs auto over a list keeps to it when it finds one worker enough: the
// single run is on the GPU named, not the caller's first; and over all GPUs,
// a chain that keeps one busy (pencil into x264) runs on the first, the
// stats saying why.
TEST(SegmentsGpu, JobsAutoRunsOnTheGpusItIsGivenAndSaysWhichAndWhy) {
  if (!cuda_device_available()) GTEST_SKIP() << "no CUDA device: the GPU workers are not exercised here";
  const int gpus = cuda_device_count();
  if (gpus < 2) GTEST_SKIP() << "one GPU here: a list cannot name another than the first";
  ClipAndCpuRun clip;
  ASSERT_NO_FATAL_FAILURE(clip.make());
  std::mt19937_64 rng(fresh_seed());
  const int named = 1 + int(rng() % uint64_t(gpus - 1));
  CommandResult r = stylepipe("run " + clip.config + " -i " + clip.in + " -o " + clip.gpu + " -y --backend cuda " +
                              "--codec ffv1 --jobs auto --devices " + std::to_string(named) + " --stats-json " + clip.stats);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("--jobs auto: 1 worker"), std::string::npos) << r.output;
  EXPECT_EQ(video_md5s(clip.gpu), video_md5s(clip.cpu));
  nlohmann::json j = nlohmann::json::parse(std::ifstream(clip.stats));
  EXPECT_EQ(j["cuda_device"]["pci_bus_id"], cuda_device_pci_bus_id(named)) << j["cuda_device"];
  EXPECT_EQ(j["jobs_auto"]["devices"], std::to_string(named)) << j["jobs_auto"];

  // 1080p pencil is 0.26 ms of a GPU a frame by its bound, and x264 on the
  // cores encodes 1080p at 58 fps a core at most: up to 60 cores keep one GPU
  // 0.9 busy. (At 640x360 the bound's floor of launches, 0.045 ms, already
  // asks for a second GPU at 42 cores: it ran on both on a 32-core host.)
  const std::string pencil = source_dir() + "/configs/pencil.yaml", hd = clip.dir.file("hd.mp4"),
                    mp4 = clip.dir.file("pencil.mp4");
  const CommandResult made = run_command("ffmpeg -hide_banner -v error -y -f lavfi -i testsrc2=size=1920x1080:rate=30 "
                                         "-frames:v 10 -c:v libx264 -preset ultrafast -pix_fmt yuv420p " + hd);
  ASSERT_EQ(made.exit_code, 0) << made.output;
  r = stylepipe("run " + pencil + " -i " + hd + " -o " + mp4 + " -y --backend cuda --codec libx264 --preset "
                "ultrafast --encoder software --jobs auto --devices all --stats-json " + clip.stats);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  j = nlohmann::json::parse(std::ifstream(clip.stats));
  if (usable_cores() <= 60) {
    EXPECT_EQ(j["jobs_auto"]["devices"], "0") << j["jobs_auto"];
    const std::string why = j["jobs_auto"].value("devices_reason", "");
    EXPECT_NE(why.find("1 of " + std::to_string(gpus) + " GPUs"), std::string::npos) << j["jobs_auto"];
    EXPECT_NE(r.output.find("--jobs auto: " + why + " (--devices 0)"), std::string::npos) << r.output;
    EXPECT_EQ(j["cuda_device"]["pci_bus_id"], cuda_device_pci_bus_id(0)) << j["cuda_device"];
  }
}

TEST(SegmentsGpu, ADeviceThatDoesNotExistIsAUsageError) {
  const int present = cuda_device_count();
  TempDir dir;
  // The input does not exist either: the GPUs are counted while it is read,
  // and the wrong argument is still the error said.
  for (const char* jobs : {"2", "auto"}) {
    const CommandResult r = stylepipe("run " + source_dir() + "/configs/example.yaml -i " + dir.file("x.mp4") + " -o " +
                                      dir.file("y.mkv") + " --jobs " + jobs + " --devices " + std::to_string(present));
    EXPECT_EQ(r.exit_code, 64) << jobs << ": " << r.output;
    EXPECT_NE(r.output.find("GPU " + std::to_string(present) + " does not exist"), std::string::npos) << r.output;
  }
}

}  // namespace
}  // namespace sp::test
