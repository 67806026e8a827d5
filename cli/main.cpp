#include "cli/app.h"

int main(int argc, char** argv) { return sp::cli::run_app(argc, argv); }
