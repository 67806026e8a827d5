#pragma once

namespace sp::cli {

// Parses the command line, runs the subcommand, maps errors to exit codes.
int run_app(int argc, char** argv);

}  // namespace sp::cli
