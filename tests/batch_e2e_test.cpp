// Batches through the binary: several inputs, globs and output patterns in
// one process, checked against single runs of the same clips and against
// ffprobe/ffmpeg as the independent oracle.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <random>
#include <set>

#include <nlohmann/json.hpp>

#include "orchestration/auto_jobs.h"
#include "orchestration/segment_plan.h"
#include "pipeline/config.h"
#include "pipeline/cores.h"
#include "pipeline/device.h"
#include "pipeline/stage.h"
#include "tests/e2e_util.h"
#include "tests/support/test_support.h"

namespace sp::test {
namespace {

namespace fs = std::filesystem;

// A random window of a larger testsrc2, a random tone when `audio`; a
// keyframe every `gop` frames where given.
std::string make_clip(const std::string& path, const std::string& size, double seconds, bool audio, int rate = 25,
                      int gop = 0) {
  std::mt19937_64 rng(fresh_seed() ^ std::hash<std::string>{}(path));
  const size_t x = size.find('x');
  const int w = std::stoi(size.substr(0, x)), h = std::stoi(size.substr(x + 1));
  const std::string video = "-f lavfi -i \"testsrc2=size=" + std::to_string(w + 64) + "x" + std::to_string(h + 64) +
                            ":rate=" + std::to_string(rate) + ",crop=" + std::to_string(w) + ":" +
                            std::to_string(h) + ":" + std::to_string(2 * (rng() % 32)) + ":" +
                            std::to_string(2 * (rng() % 32)) + "\"";
  const std::string tone = audio ? " -f lavfi -i sine=frequency=" + std::to_string(200 + rng() % 800) +
                                       ":sample_rate=44100 -c:a aac"
                                 : "";
  const std::string keyframes = gop > 0 ? " -g " + std::to_string(gop) : "";
  const CommandResult r = ffmpeg(video + tone + " -t " + std::to_string(seconds) + " -c:v libx264" + keyframes +
                                 " -pix_fmt yuv420p " + shell_quote(path));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  return path;
}

// Irregular frame times (40, then 100, then 60 ms) and a tone.
std::string make_vfr_clip(const std::string& path) {
  std::mt19937_64 rng(fresh_seed() ^ std::hash<std::string>{}(path));
  const CommandResult r = ffmpeg(
      "-f lavfi -i testsrc2=size=128x96:rate=25:duration=0.6 -f lavfi -i sine=frequency=" +
      std::to_string(200 + rng() % 800) + ":sample_rate=44100:duration=1.1 -vf \"setpts='if(lt(N,5),N*0.04,"
      "if(lt(N,10),0.2+(N-5)*0.1,0.7+(N-10)*0.06))/TB'\" -fps_mode vfr -c:v libx264 -pix_fmt yuv420p -c:a aac " +
      shell_quote(path));
  EXPECT_EQ(r.exit_code, 0) << r.output;
  return path;
}

std::string make_corrupt_file(const std::string& path) {
  std::mt19937_64 rng(fresh_seed() ^ std::hash<std::string>{}(path));
  std::ofstream f(path, std::ios::binary);
  for (int i = 0; i < 32768; ++i) f.put(char(rng()));
  return path;
}

// Every decoded picture with its time, and every audio packet: what a run writes.
std::string fingerprint(const std::string& file) {
  std::string f = video_md5s(file);
  for (const std::string& h : audio_packet_hashes(file)) f += "audio " + h + "\n";
  return f;
}

// pencil (temporal: its state must start again with each clip) where the
// build has it; the ThreadSanitizer build leaves it out, and has xbr.
std::string styled_config() {
  return source_dir() + (StageRegistry::instance().find("pencil") ? "/configs/pencil.yaml" : "/configs/xbr-live.yaml");
}

// Lossless video, so that the encoder's thread count (a batch gives each clip
// its share of the cores) changes no picture.
const std::string kRun = " --backend cpu --codec ffv1";

std::vector<std::string> files_in(const std::string& folder) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(folder)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

std::string video_size(const std::string& file) {
  return run_command("ffprobe -v error -select_streams v:0 -show_entries stream=width,height -of csv=s=x:p=0 " +
                     shell_quote(file)).output;
}

TEST(BatchE2E, EqualsTheSingleRunsAndACorruptInputFailsAlone) {
  TempDir dir;
  fs::create_directories(dir.file("batch"));
  fs::create_directories(dir.file("single"));
  const std::vector<std::string> inputs = {make_clip(dir.file("wide.mp4"), "160x120", 0.6, true),
                                           make_corrupt_file(dir.file("broken.mp4")),
                                           make_clip(dir.file("small.mkv"), "64x48", 0.4, false),
                                           make_vfr_clip(dir.file("vfr.mkv"))};
  std::string args = "run " + styled_config();
  for (const std::string& in : inputs) args += " -i " + shell_quote(in);
  const std::string stats = dir.file("stats.json");
  const CommandResult batch =
      stylepipe(args + " -o " + shell_quote(dir.file("batch/{stem}_{ext}.mkv")) + kRun + " --jobs 2 --stats-json " + stats);
  EXPECT_EQ(batch.exit_code, 65) << batch.output;
  EXPECT_NE(batch.output.find("3 of 4 inputs done, 1 failed"), std::string::npos) << batch.output;

  for (const std::string& in : inputs) {
    const fs::path p(in);
    const std::string name = p.stem().string() + "_" + p.extension().string().substr(1) + ".mkv";
    const CommandResult single =
        stylepipe("run " + styled_config() + " -i " + shell_quote(in) + " -o " + shell_quote(dir.file("single/" + name)) + kRun);
    if (in == inputs[1]) {
      EXPECT_EQ(single.exit_code, 65) << single.output;
      EXPECT_FALSE(fs::exists(dir.file("batch/" + name))) << "the corrupt input has no output";
      // Its line in the batch's report: the input, then the single run's words.
      const std::string line_start = "stylepipe: " + in + ": ";
      const size_t at = batch.output.find(line_start);
      ASSERT_NE(at, std::string::npos) << batch.output;
      const std::string error = batch.output.substr(at + line_start.size(), batch.output.find('\n', at) - at - line_start.size());
      EXPECT_FALSE(error.empty());
      EXPECT_NE(single.output.find(error), std::string::npos) << error << "\nvs\n" << single.output;
      continue;
    }
    ASSERT_EQ(single.exit_code, 0) << single.output;
    const std::string from_batch = fingerprint(dir.file("batch/" + name));
    EXPECT_GT(from_batch.size(), 100u) << name;
    EXPECT_EQ(from_batch, fingerprint(dir.file("single/" + name))) << name << ": the batch's output differs";
  }
  EXPECT_EQ(files_in(dir.file("batch")), (std::vector<std::string>{"small_mkv.mkv", "vfr_mkv.mkv", "wide_mp4.mkv"}))
      << "nothing else, no temporary file left";

  const nlohmann::json s = read_json(stats);
  ASSERT_EQ(s["inputs"].size(), 4u) << s.dump(2);
  for (size_t k = 0; k < inputs.size(); ++k) {
    const nlohmann::json& e = s["inputs"][k];
    EXPECT_EQ(e["input"], inputs[k]);
    EXPECT_EQ(e["exit_code"], k == 1 ? 65 : 0);
    EXPECT_EQ(e["error"].get<std::string>().empty(), k != 1);
    if (k != 1) {
      EXPECT_EQ(e["frames"], decoded_video_frames(e["output"])) << e.dump();
    }
    EXPECT_GT(e["seconds"].get<double>(), 0);
    EXPECT_TRUE(e.contains("fps"));
  }
  EXPECT_EQ(s["totals"]["done"], 3);
  EXPECT_EQ(s["totals"]["failed"], 1);
  EXPECT_EQ(s["totals"]["frames"], s["inputs"][0]["frames"].get<int>() + s["inputs"][2]["frames"].get<int>() +
                                       s["inputs"][3]["frames"].get<int>());
}

// One worker takes the clips in order and keeps its chain: kept as it was
// for a clip of the size before, configured again for the other size. Its
// temporal stage must start each clip cold, as the clip's single run does:
// the state of the clip before would change the first frames. Pencil
// forgets its state itself; lowpoly's temporal mesh is configured again.
TEST(BatchE2E, AKeptChainStartsEachClipAsItsSingleRun) {
  TempDir dir;
  std::mt19937_64 rng(fresh_seed());
  const std::vector<std::string> sizes = {"96x64", "96x64", "64x48", "64x48", "96x64", "64x48"};
  // Appended, not "c" + ...: GCC 12 warns falsely (-Wrestrict) on that.
  const auto numbered = [](size_t k, const char* extension) {
    std::string name = "c";
    name += std::to_string(k);
    return name += extension;
  };
  std::vector<std::string> inputs;
  for (size_t k = 0; k < sizes.size(); ++k)
    inputs.push_back(make_clip(dir.file(numbered(k, ".mp4")), sizes[k], 0.32 + 0.04 * double(rng() % 4), false));
  std::vector<std::string> configs = {styled_config()};
  if (StageRegistry::instance().find("lowpoly")) configs.push_back(source_dir() + "/stages/lowpoly/temporal.yaml");
  // On a GPU machine the CUDA engine's kept chain too (its device-side resets).
  std::vector<std::pair<std::string, std::string>> cases;  // config, run flags
  for (const std::string& config : configs) {
    cases.emplace_back(config, kRun);
    if (cuda_device_available()) cases.emplace_back(config, " --backend cuda --codec ffv1");
  }
  for (const auto& [config, run] : cases) {
    SCOPED_TRACE(config + run);
    fs::remove_all(dir.file("batch"));
    fs::remove_all(dir.file("single"));
    fs::create_directories(dir.file("batch"));
    fs::create_directories(dir.file("single"));
    std::string args = "run " + config;
    for (const std::string& in : inputs) args += " -i " + shell_quote(in);
    const std::string stats = dir.file("stats.json");
    const CommandResult batch =
        stylepipe(args + " -o " + shell_quote(dir.file("batch/{stem}.mkv")) + run + " --jobs 1 --stats-json " + stats);
    ASSERT_EQ(batch.exit_code, 0) << batch.output;
    const nlohmann::json s = read_json(stats);
    ASSERT_EQ(s["inputs"].size(), inputs.size()) << s.dump(2);
    for (size_t k = 0; k < inputs.size(); ++k) {
      const std::string name = numbered(k, ".mkv");
      const CommandResult single = stylepipe("run " + config + " -i " + shell_quote(inputs[k]) + " -o " +
                                             shell_quote(dir.file("single/" + name)) + run);
      ASSERT_EQ(single.exit_code, 0) << single.output;
      EXPECT_EQ(video_md5s(dir.file("batch/" + name)), video_md5s(dir.file("single/" + name)))
          << name << " (" << sizes[k] << ", after a clip of " << (k ? sizes[k - 1] : "none") << ") differs";
      const std::string expected = k == 0 ? "built" : sizes[k] == sizes[k - 1] ? "kept" : "kept, configured";
      EXPECT_EQ(s["inputs"][k]["stats"]["stage_chain"], expected) << name;
      EXPECT_EQ(s["inputs"][k]["frames"], decoded_video_frames(inputs[k])) << name;
    }
  }
}

// A clip long enough for --jobs auto to give it two workers by its length
// (auto_jobs.cpp: 10 s a worker, or 20 times the chain's warm-up) is cut
// as `run CLIP --jobs 2` cuts it, warm-up frames included, and joined into
// its output; the short ones run whole. Each output is its single run's. A
// failed segment fails its clip alone, and the same command completes it.
TEST(BatchE2E, ALongClipIsCutAsItsJobsRunAndTheShortOnesRunWhole) {
  TempDir dir;
  fs::create_directories(dir.file("batch"));
  fs::create_directories(dir.file("single"));
  std::mt19937_64 rng(fresh_seed());
  const double warmup = warmup_seconds_at(chain_warmup(load_config(styled_config())), 10);  // the long clip's rate
  const double long_seconds = 2 * seconds_per_worker(warmup) + 5 + double(rng() % 10);
  const std::vector<std::string> inputs = {make_clip(dir.file("a.mp4"), "64x48", 0.4, true),
                                           make_clip(dir.file("long.mp4"), "64x48", long_seconds, true, 10, 40),
                                           make_clip(dir.file("b.mkv"), "80x64", 0.6, false),
                                           make_clip(dir.file("c.mp4"), "64x48", 0.5, true)};
  std::string args = "run " + styled_config();
  for (const std::string& in : inputs) args += " -i " + shell_quote(in);
  const std::string stats = dir.file("stats.json");
  const std::string command =
      args + " -o " + shell_quote(dir.file("batch/{stem}.mkv")) + kRun + " -y --jobs 2 --stats-json " + stats;

  // Segment 1 cannot open its output (a folder holds its temporary file's
  // name): the long clip fails alone, and nothing of it is joined.
  const std::string blocker = dir.file("batch/long.mkv.parts/.segment_0001.nut.partial.partial");
  fs::create_directories(blocker);
  const CommandResult failed = stylepipe(command);
  EXPECT_EQ(failed.exit_code, 65) << failed.output;
  EXPECT_NE(failed.output.find("3 of 4 inputs done, 1 failed"), std::string::npos) << failed.output;
  EXPECT_NE(failed.output.find("stylepipe: " + inputs[1] + ": "), std::string::npos) << failed.output;
  EXPECT_EQ(files_in(dir.file("batch")), (std::vector<std::string>{"a.mkv", "b.mkv", "c.mkv", "long.mkv.parts"}))
      << "no joined output, no temporary one";
  const nlohmann::json f = read_json(stats);
  EXPECT_NE(f["inputs"][1]["exit_code"], 0) << f["inputs"][1].dump(2);
  EXPECT_FALSE(f["inputs"][1]["error"].get<std::string>().empty()) << f["inputs"][1].dump(2);

  // The same command again redoes what is missing.
  fs::remove_all(blocker);
  const CommandResult batch = stylepipe(command);
  ASSERT_EQ(batch.exit_code, 0) << batch.output;
  const nlohmann::json s = read_json(stats);
  ASSERT_EQ(s["inputs"].size(), inputs.size()) << s.dump(2);

  const std::string single_stats = dir.file("single.json");
  for (size_t k = 0; k < inputs.size(); ++k) {
    const std::string name = fs::path(inputs[k]).stem().string() + ".mkv";
    const bool is_long = k == 1;
    const std::string jobs = is_long ? " --jobs 2 --stats-json " + single_stats : "";
    const CommandResult single = stylepipe("run " + styled_config() + " -i " + shell_quote(inputs[k]) + " -o " +
                                           shell_quote(dir.file("single/" + name)) + kRun + jobs);
    ASSERT_EQ(single.exit_code, 0) << single.output;
    EXPECT_EQ(fingerprint(dir.file("batch/" + name)), fingerprint(dir.file("single/" + name))) << name << " differs";
    const nlohmann::json& e = s["inputs"][k];
    EXPECT_EQ(e["exit_code"], 0) << e.dump();
    EXPECT_EQ(e["frames"], decoded_video_frames(dir.file("batch/" + name))) << name;
    EXPECT_EQ(e.contains("segments"), is_long) << e.dump();
  }
  const nlohmann::json& cut = s["inputs"][1];
  const nlohmann::json jobs_run = read_json(single_stats);
  ASSERT_GE(jobs_run["segments"].size(), 2u) << jobs_run.dump(2);
  EXPECT_EQ(cut["segments"], jobs_run["segments"].size()) << "the batch planned the long clip as its --jobs run";
  ASSERT_EQ(cut["stats"]["segments"].size(), jobs_run["segments"].size()) << cut.dump(2);
  for (const nlohmann::json& segment : cut["stats"]["segments"]) {
    EXPECT_EQ(segment["exit_code"], 0);
    if (warmup > 0 && segment["index"] > 0) {
      EXPECT_GT(segment["stats"]["frames"]["lead_in"].get<int>(), 0) << "a temporal stage warms up before each seam";
    }
  }
  EXPECT_NE(batch.output.find("long.mp4: " + std::to_string(jobs_run["segments"].size()) + " segments"),
            std::string::npos) << batch.output;
  EXPECT_EQ(files_in(dir.file("batch")), (std::vector<std::string>{"a.mkv", "b.mkv", "c.mkv", "long.mkv"}))
      << "no segment folder, no temporary file left";

  // Alone in a batch (a pattern), the long clip still has --jobs workers:
  // the one that cut it runs segment 0, the other takes segment 1.
  fs::create_directories(dir.file("alone"));
  const std::string alone_stats = dir.file("alone.json");
  const CommandResult alone = stylepipe("run " + styled_config() + " -i " + shell_quote(inputs[1]) + " -o " +
                                        shell_quote(dir.file("alone/{stem}.mkv")) + kRun +
                                        " --jobs 2 --stats-json " + alone_stats);
  ASSERT_EQ(alone.exit_code, 0) << alone.output;
  EXPECT_EQ(fingerprint(dir.file("alone/long.mkv")), fingerprint(dir.file("single/long.mkv")));
  const nlohmann::json a = read_json(alone_stats)["inputs"][0]["stats"]["segments"];
  ASSERT_GE(a.size(), 2u) << a.dump(2);
  EXPECT_NE(a[0]["worker"], a[1]["worker"]) << a.dump(2);
}

TEST(BatchE2E, FailFastStartsNothingAfterTheBadInput) {
  TempDir dir;
  fs::create_directories(dir.file("out"));
  const std::string first = make_clip(dir.file("a.mp4"), "96x64", 0.4, true);
  const std::string bad = make_corrupt_file(dir.file("b.mp4"));
  const std::string last = make_clip(dir.file("c.mp4"), "80x64", 0.4, false);
  const std::string stats = dir.file("stats.json");
  const CommandResult r = stylepipe("run " + identity_config() + " -i " + shell_quote(first) + " -i " + shell_quote(bad) +
                                    " -i " + shell_quote(last) + " -o " + shell_quote(dir.file("out/{stem}.mkv")) + kRun +
                                    " --fail-fast --stats-json " + stats);
  EXPECT_EQ(r.exit_code, 65) << r.output;
  EXPECT_NE(r.output.find("1 of 3 inputs done, 1 failed, 1 not started"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("stylepipe: " + bad + ": "), std::string::npos) << r.output;
  EXPECT_EQ(files_in(dir.file("out")), std::vector<std::string>{"a.mkv"}) << "nothing half-written, nothing after the bad one";
  EXPECT_EQ(decoded_video_frames(dir.file("out/a.mkv")), decoded_video_frames(first));
  const nlohmann::json s = read_json(stats);
  ASSERT_EQ(s["inputs"].size(), 3u);
  EXPECT_TRUE(s["inputs"][2]["exit_code"].is_null());
  EXPECT_EQ(s["totals"]["not_started"], 1);
}

// --jobs auto in a batch says how many clips it runs at a time, by the rule
// written here apart from auto_jobs.cpp (eight a GPU and two cores a clip; on
// the CPU backend 16 cores a clip; never more than the clips), and each
// output is still its single run's.
TEST(BatchE2E, JobsAutoRunsClipsSideBySideByTheHostsGpusAndCores) {
  TempDir dir;
  std::mt19937_64 rng(fresh_seed());
  std::string args;
  std::vector<std::string> inputs;
  const size_t clips = 5 + rng() % 6;
  for (size_t k = 0; k < clips; ++k) {
    std::string name = "clip";
    name += std::to_string(k);
    inputs.push_back(make_clip(dir.file(name + ".mp4"), rng() % 2 ? "96x64" : "80x48", 0.2 + 0.04 * double(rng() % 5), false));
    args += " -i " + shell_quote(inputs.back());
  }
  const int cores = usable_cores();
  std::vector<std::pair<std::string, int>> cases = {{kRun, std::max(1, std::min(int(clips), cores / 16))}};
  if (cuda_device_available())
    cases.emplace_back(" --backend cuda --codec ffv1 --devices 0", std::max(1, std::min({int(clips), 8, cores / 2})));
  for (const auto& [run, expected] : cases) {
    SCOPED_TRACE(run);
    fs::remove_all(dir.file("out"));
    fs::create_directories(dir.file("out"));
    const std::string stats = dir.file("stats.json");
    const CommandResult r = stylepipe("run " + styled_config() + args + " -o " + shell_quote(dir.file("out/{stem}.mkv")) +
                                      run + " --jobs auto --stats-json " + stats);
    ASSERT_EQ(r.exit_code, 0) << r.output;
    const std::string said = "--jobs auto: " + std::to_string(expected) + (expected == 1 ? " clip" : " clips") + " at a time";
    EXPECT_NE(r.output.find(said), std::string::npos) << said << " not in: " << r.output;
    EXPECT_EQ(read_json(stats)["jobs"], expected);
    for (size_t k = 0; k < clips; ++k) {
      std::string name = "clip";
      name += std::to_string(k);
      const std::string single = dir.file("single.mkv");
      const CommandResult one = stylepipe("run " + styled_config() + " -i " + shell_quote(inputs[k]) + " -o " +
                                          shell_quote(single) + " -y" + run.substr(0, run.find(" --devices")));
      ASSERT_EQ(one.exit_code, 0) << one.output;
      EXPECT_EQ(video_md5s(dir.file("out/" + name + ".mkv")), video_md5s(single)) << inputs[k];
    }
  }
}

// With several workers the longest clips start first, whatever their place
// in the list (a long clip started last keeps one worker busy while the
// others wait); the stats keep the list's order.
TEST(BatchE2E, SeveralWorkersStartTheLongestClipsFirst) {
  TempDir dir;
  fs::create_directories(dir.file("out"));
  std::mt19937_64 rng(fresh_seed());
  std::vector<double> seconds = {0.8, 0.9, 1.0, 1.1, 5.0, 6.0};
  std::shuffle(seconds.begin(), seconds.end(), rng);
  std::string args;
  std::vector<std::string> inputs;
  for (size_t k = 0; k < seconds.size(); ++k) {
    std::string name = "clip";
    name += std::to_string(k);
    inputs.push_back(make_clip(dir.file(name + ".mp4"), "320x240", seconds[k], false));
    args += " -i " + shell_quote(inputs.back());
  }
  const std::string stats = dir.file("stats.json");
  const CommandResult r = stylepipe("run " + identity_config() + args + " -o " + shell_quote(dir.file("out/{stem}.mkv")) +
                                    kRun + " --jobs 2 --stats-json " + stats);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const nlohmann::json s = read_json(stats);
  ASSERT_EQ(s["inputs"].size(), inputs.size());
  double longest_started = 0, others_started = 1e9;
  for (size_t k = 0; k < inputs.size(); ++k) {
    const nlohmann::json& e = s["inputs"][k];
    EXPECT_EQ(e["input"], inputs[k]) << "the stats keep the list's order";
    EXPECT_EQ(e["frames"], decoded_video_frames(inputs[k])) << inputs[k];
    const double started = e["started_seconds"].get<double>();
    if (seconds[k] >= 5) longest_started = std::max(longest_started, started);
    else others_started = std::min(others_started, started);
  }
  EXPECT_LT(longest_started, others_started) << "a shorter clip started before one of the two longest: " << s.dump(2);
}

TEST(BatchE2E, PatternRefusesCollisionsAndOutputsThatAreInputsBeforeAnyWork) {
  TempDir dir;
  fs::create_directories(dir.file("x"));
  fs::create_directories(dir.file("y"));
  fs::create_directories(dir.file("out"));
  const std::string a = make_clip(dir.file("x/clip.mp4"), "64x48", 0.2, false);
  const std::string b = make_clip(dir.file("y/clip.mp4"), "96x64", 0.2, false);
  const std::string c = make_clip(dir.file("y/other.mp4"), "64x48", 0.2, false);
  const std::string two = " -i " + shell_quote(c) + " -i " + shell_quote(a) + " -i " + shell_quote(b);
  const auto run = [&](const std::string& out, const std::string& flags = "") {
    return stylepipe("run " + identity_config() + two + " -o " + shell_quote(out) + kRun + flags);
  };
  const CommandResult collision = run(dir.file("out/{stem}.mkv"));
  EXPECT_EQ(collision.exit_code, 64) << collision.output;
  const std::string line = collision.output.substr(0, collision.output.find('\n'));
  for (const std::string& named : {a, b, dir.file("out/clip.mkv")})
    EXPECT_NE(line.find(named), std::string::npos) << "one line names both inputs and the output: " << collision.output;
  EXPECT_TRUE(files_in(dir.file("out")).empty()) << "refused before any work";

  // An output that is an input (here other.mp4's own file) is refused.
  const CommandResult onto_input = stylepipe("run " + identity_config() + " -i " + shell_quote(a) + " -i " + shell_quote(c) +
                                             " -o " + shell_quote(dir.file("y/{stem}.mp4")) + kRun);
  EXPECT_EQ(onto_input.exit_code, 64) << onto_input.output;
  EXPECT_NE(onto_input.output.find("is the input " + c), std::string::npos) << onto_input.output;
  EXPECT_EQ(files_in(dir.file("y")), (std::vector<std::string>{"clip.mp4", "other.mp4"})) << "nothing written";

  // An existing output needs -y, checked for every output before the first clip runs.
  std::ofstream(dir.file("out/2_clip.mkv")) << "keep me";
  const CommandResult existing = run(dir.file("out/{index}_{stem}.mkv"));
  EXPECT_EQ(existing.exit_code, 64) << existing.output;
  EXPECT_EQ(files_in(dir.file("out")), std::vector<std::string>{"2_clip.mkv"});
  const CommandResult overwrite = run(dir.file("out/{index}_{stem}.mkv"), " -y");
  EXPECT_EQ(overwrite.exit_code, 0) << overwrite.output;
  EXPECT_EQ(video_size(dir.file("out/2_clip.mkv")), "96x64\n");

  EXPECT_EQ(run(dir.file("out/all.mkv")).exit_code, 64) << "several inputs need a pattern";
  const CommandResult unknown = run(dir.file("out/{size}.mkv"));
  EXPECT_EQ(unknown.exit_code, 64);
  EXPECT_NE(unknown.output.find("{size}"), std::string::npos) << unknown.output;
}

TEST(BatchE2E, GlobExpandsInSortedOrderAndPlaceholdersFillIn) {
  TempDir dir;
  fs::create_directories(dir.file("clips"));
  fs::create_directories(dir.file("out"));
  std::mt19937_64 rng(fresh_seed());
  std::map<std::string, std::string> size_of;  // sorted by name: the glob's order
  while (size_of.size() < 3) {
    std::string stem;
    for (int i = 0; i < 6; ++i) stem += char('a' + rng() % 26);
    const std::string size = std::to_string(32 + 16 * int(rng() % 8)) + "x" + std::to_string(32 + 16 * int(rng() % 6));
    size_of[stem] = size;
    make_clip(dir.file("clips/" + stem + ".mp4"), size, 0.2, rng() % 2);
  }
  std::ofstream(dir.file("clips/notes.txt")) << "not a clip";
  const std::string stats = dir.file("stats.json");
  const CommandResult r = stylepipe("run " + identity_config() + " -i " + shell_quote(dir.file("clips/*.mp4")) + " -o " +
                                    shell_quote(dir.file("out/{index}-{stem}-{ext}-{name}.mkv")) + kRun +
                                    " --jobs 2 --stats-json " + stats);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.output.find("3 of 3 inputs done, 0 failed"), std::string::npos) << r.output;
  std::vector<std::string> expected;
  int index = 0;
  for (const auto& [stem, size] : size_of) {
    const std::string name = std::to_string(index++) + "-" + stem + "-mp4-" + stem + ".mp4.mkv";
    expected.push_back(name);
    EXPECT_EQ(video_size(dir.file("out/" + name)), size + "\n") << name << " is the output of another clip";
  }
  std::vector<std::string> written = files_in(dir.file("out"));
  std::sort(expected.begin(), expected.end());
  EXPECT_EQ(written, expected);
  const nlohmann::json s = read_json(stats);
  ASSERT_EQ(s["inputs"].size(), 3u);
  index = 0;
  for (const auto& [stem, size] : size_of) {
    EXPECT_EQ(s["inputs"][index]["input"], dir.file("clips/" + stem + ".mp4")) << "sorted order";
    EXPECT_EQ(s["inputs"][index]["frames"], decoded_video_frames(dir.file("clips/" + stem + ".mp4")));
    ++index;
  }

  const CommandResult none = stylepipe("run " + identity_config() + " -i " + shell_quote(dir.file("clips/*.avi")) +
                                       " -o " + shell_quote(dir.file("out/{stem}.mkv")) + kRun);
  EXPECT_EQ(none.exit_code, 64);
  EXPECT_NE(none.output.find("clips/*.avi"), std::string::npos) << none.output;
}

}  // namespace
}  // namespace sp::test
