// What a run that uses only its first GPUs leaves visible: never a GPU the
// environment hid.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
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

}  // namespace
}  // namespace sp::test
