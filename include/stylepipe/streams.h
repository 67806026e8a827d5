#pragma once
// Ordering between CUDA streams that a front end receives from its callers.

namespace stylepipe {

// From now on, work queued on `consumer` waits for the work already queued on
// `producer` (an event recorded on one, waited for on the other; no host
// synchronization). Both are cudaStream_t of `device`; a null one is the
// legacy default stream. Throws DeviceError in a build without CUDA.
void order_streams(void* consumer, void* producer, int device);

}  // namespace stylepipe
