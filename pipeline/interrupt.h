#pragma once

namespace sp {

// SIGINT/SIGTERM set a flag the reader polls: reading stops, the encoder is
// flushed and the trailer written, so the partial output plays. A second
// signal falls back to the default action (immediate exit).
void install_interrupt_handlers();
bool interrupted();
void request_interrupt();  // for tests and internal aborts

}  // namespace sp
