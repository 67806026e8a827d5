#pragma once

namespace sp {

// SIGINT/SIGTERM set a flag the reader polls: reading stops, the encoder is
// flushed and the trailer written, so the partial output plays. A second
// signal falls back to the default action (immediate exit).
void install_interrupt_handlers();
bool interrupted();
void request_interrupt();  // for tests and internal aborts
// Clears the flag once the interrupted work has stopped, so that finishing
// steps (joining what was done) can run. A further signal still ends the
// process at once: the handler is not reinstalled.
void acknowledge_interrupt();

}  // namespace sp
