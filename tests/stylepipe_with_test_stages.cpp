// The stylepipe CLI with the config test stages (test_every, test_empty)
// registered too, so that `validate` and `schema` can be compared on the bad
// configs of tests/configs, which use those stages
// (tests/check_configs_against_schema.py).
#include "cli/app.h"
#include "tests/config_test_stages.h"

int main(int argc, char** argv) {
  sp::test::register_config_test_stages();
  return sp::cli::run_app(argc, argv);
}
