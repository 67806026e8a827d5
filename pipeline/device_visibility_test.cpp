// What a run that uses only its first GPUs leaves visible: never a GPU the
// environment hid.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <random>
#include <string>

#include "pipeline/device.h"
#include "tests/support/test_support.h"

namespace sp::test {
namespace {

// Sets CUDA_VISIBLE_DEVICES (nullopt: unsets it) for one test, then puts it back.
class VisibleDevices {
 public:
  explicit VisibleDevices(const std::optional<std::string>& value) {
    if (const char* old = std::getenv("CUDA_VISIBLE_DEVICES")) old_ = old;
    if (value) setenv("CUDA_VISIBLE_DEVICES", value->c_str(), 1);
    else unsetenv("CUDA_VISIBLE_DEVICES");
  }
  ~VisibleDevices() {
    if (old_) setenv("CUDA_VISIBLE_DEVICES", old_->c_str(), 1);
    else unsetenv("CUDA_VISIBLE_DEVICES");
  }

 private:
  std::optional<std::string> old_;
};

TEST(DeviceVisibility, KeepsTheFirstOfTheListedGpusAndNeverAddsOne) {
  std::mt19937_64 rng(fresh_seed() ^ 0x715);
  // A random list of distinct GPUs, by index or UUID, in a random order.
  std::vector<std::string> gpus;
  for (int i = 0; i < 8; ++i) gpus.push_back(rng() % 2 ? std::to_string(i) : "GPU-" + std::to_string(rng() % 100000));
  std::shuffle(gpus.begin(), gpus.end(), rng);
  gpus.resize(1 + rng() % 4);
  std::string listed;
  for (size_t i = 0; i < gpus.size(); ++i) listed += (i ? "," : "") + gpus[i];
  const VisibleDevices visible(listed);
  for (int count = 1; count <= 6; ++count) {
    std::string expected;
    for (int i = 0; i < std::min<int>(count, int(gpus.size())); ++i) expected += (i ? "," : "") + gpus[size_t(i)];
    EXPECT_EQ(visible_devices_up_to(count), expected) << listed << ", " << count;
  }
  for (size_t i = 0; i < gpus.size(); ++i) EXPECT_EQ(visible_device_entry(int(i)), gpus[i]) << listed;
}

TEST(DeviceVisibility, UnsetShowsEveryOrdinalAndEmptyHidesThemAll) {
  std::mt19937_64 rng(fresh_seed() ^ 0x716);
  const int count = 1 + int(rng() % 8);
  std::string expected;
  for (int i = 0; i < count; ++i) expected += std::string(i ? "," : "") + std::to_string(i);
  {
    const VisibleDevices unset(std::nullopt);
    EXPECT_EQ(visible_devices_up_to(count), expected);
  }
  const VisibleDevices empty(std::string{});
  EXPECT_EQ(visible_devices_up_to(count), "");
}

// The kernel driver's /proc/driver/nvidia/gpus, as an H200 host's shows it
// (tabs and all), with random UUIDs and models, and a folder with no file.
TEST(DeviceVisibility, DriverGpusAreReadFromTheDriversProcEntries) {
  namespace fs = std::filesystem;
  std::mt19937_64 rng(fresh_seed() ^ 0x717);
  const fs::path dir = fs::temp_directory_path() / ("sp-driver-gpus-" + std::to_string(rng()));
  std::vector<DriverGpu> made;
  const int count = 1 + int(rng() % 6);
  for (int i = 0; i < count; ++i) {
    const DriverGpu gpu{"GPU-" + std::to_string(rng()) + "-9f50", rng() % 2 ? "NVIDIA H200" : "NVIDIA L40S"};
    const fs::path bus = dir / ("0000:" + std::to_string(10 + i) + ":00.0");
    fs::create_directories(bus);
    std::ofstream(bus / "information") << "Model: \t\t " << gpu.model << "\nIRQ:   \t\t 41\nGPU UUID: \t " << gpu.uuid
                                       << "\nVideo BIOS: \t 96.00.a5.00.1a\nBus Type: \t PCIe\n";
    made.push_back(gpu);
  }
  fs::create_directories(dir / "0000:99:00.0");  // no information file: not a GPU we can name
  std::vector<DriverGpu> read = driver_gpus(dir.string());
  auto by_uuid = [](const DriverGpu& a, const DriverGpu& b) { return a.uuid < b.uuid; };
  std::sort(made.begin(), made.end(), by_uuid);
  ASSERT_EQ(read.size(), made.size());
  for (size_t i = 0; i < made.size(); ++i) {
    EXPECT_EQ(read[i].uuid, made[i].uuid);
    EXPECT_EQ(read[i].model, made[i].model);
  }
  EXPECT_TRUE(driver_gpus((dir / "absent").string()).empty());
  fs::remove_all(dir);
}

TEST(DeviceVisibility, GpusVisibleWithoutTheDriverFollowTheEnvironmentFirst) {
  const std::vector<DriverGpu> two = {{"GPU-a", "NVIDIA H200"}, {"GPU-b", "NVIDIA H200"}};
  {
    const VisibleDevices listed(std::string("0,GPU-1234,2"));
    EXPECT_EQ(gpus_visible_without_driver(two), 3);
  }
  const VisibleDevices unset(std::nullopt);
  EXPECT_EQ(gpus_visible_without_driver(two), 2);
  EXPECT_EQ(gpus_visible_without_driver({}), -1);
}

}  // namespace
}  // namespace sp::test
