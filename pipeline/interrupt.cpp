#include "pipeline/interrupt.h"

#include <atomic>
#include <csignal>

namespace sp {
namespace {
std::atomic<bool> g_interrupted{false};

extern "C" void on_signal(int sig) {
  g_interrupted.store(true);
  std::signal(sig, SIG_DFL);
}
}  // namespace

void install_interrupt_handlers() {
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
#ifdef SIGPIPE
  // A closed output pipe must surface as a write error (exit 74), not kill us.
  std::signal(SIGPIPE, SIG_IGN);
#endif
}

bool interrupted() { return g_interrupted.load(std::memory_order_relaxed); }
void request_interrupt() { g_interrupted.store(true); }
void acknowledge_interrupt() { g_interrupted.store(false); }

}  // namespace sp
