// What the CLI keeps visible to CUDA for a --devices value, against the list
// the run itself parses (sp::parse_device_list): one parser of the syntax.
#include "stylepipe/tools.h"

#include <gtest/gtest.h>

#include <random>
#include <string>

#include "orchestration/parallel_run.h"
#include "pipeline/errors.h"
#include "tests/support/test_support.h"

namespace sp::test {
namespace {

TEST(PublicTools, DevicesNamedKeepTheGpusUpToTheLargestListed) {
  EXPECT_EQ(stylepipe::cuda_devices_named(""), 1);  // the first GPU
  EXPECT_EQ(stylepipe::cuda_devices_named("all"), 0);
  std::mt19937_64 rng(fresh_seed());
  for (int round = 0; round < 50; ++round) {
    std::string list;
    int largest = 0;
    const int items = 1 + int(rng() % 5);
    for (int i = 0; i < items; ++i) {
      const int d = int(rng() % 16);
      largest = std::max(largest, d);
      if (i) list += ',';
      list += std::to_string(d);
    }
    EXPECT_EQ(stylepipe::cuda_devices_named(list), largest + 1) << list;
    // The run's own parse takes the same list on a host with exactly that many GPUs, and refuses it with one fewer.
    EXPECT_EQ(parse_device_list(list, largest + 1).size(), size_t(items)) << list;
    EXPECT_THROW(parse_device_list(list, largest), Error) << list;
  }
}

TEST(PublicTools, MalformedDeviceListsKeepEveryGpuAndTheRunRefusesThem) {
  for (const char* list : {"x", "0,", ",1", "0,,1", "+1", " 1", "1e3", "-1", "0,a", "1234567890"}) {
    EXPECT_EQ(stylepipe::cuda_devices_named(list), 0) << list;
    try {
      parse_device_list(list, 8);
      ADD_FAILURE() << list << " was taken";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ExitCode::usage) << list;
      EXPECT_NE(std::string(e.what()).find("is not a device number"), std::string::npos) << e.what();
    }
  }
  EXPECT_EQ(stylepipe::cuda_devices_named("99999"), 0);  // beyond any host: the run's own error says so
}

}  // namespace
}  // namespace sp::test
