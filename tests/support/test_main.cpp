#include <gtest/gtest.h>

#include <cstdio>

#include "tests/support/test_support.h"

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  std::printf("[stylepipe tests] random seed %llu (set SP_TEST_SEED to replay)\n",
              static_cast<unsigned long long>(sp::test::fresh_seed()));
  return RUN_ALL_TESTS();
}
