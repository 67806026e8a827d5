#pragma once
// The seed's neighbour search for the near field (Gwosdek et al. 2011,
// Sec. 5, Fig. 1): a 2-D map with about one slot per dot of a fully inked
// region; every dot is written into the slot of its position with a 64-bit
// atomicExch, and a dot it pushes out moves one slot to the right, until an
// empty slot (all bits set: two NaNs) comes back. The near field then reads
// the slots of the square around each dot, extended to the right by the
// largest displacement of the frame, and keeps the dots closer than eps_I
// (near_correction is zero beyond). The result equals the cell-table near
// field (FastsumGpu::add_near_field) up to the order of the float sums.
// `neighbours: lookup_map` selects it on CUDA (the CPU keeps the cell table).
#include <cuda_runtime.h>

#include <cstdint>

#include "pipeline/scratch.h"
#include "stages/halftone/halftone_math.h"

namespace sp::halftone {

struct MapDims {
  int cols = 1, rows = 1;  // slots per row, rows
  float inv_slot = 1;      // slots per pixel
  long long slots = 1;     // cols * rows plus a tail of `capacity` slots (displacement never runs out)
};

class LookupMapGpu {
 public:
  // slot_px: slot side in pixels (one slot per dot at full ink).
  void configure(int width, int height, int capacity, float slot_px, ScratchAllocator& scratch);
  // Builds the map from pos[0, *count) and adds the near-field corrections to force.
  void add_near_field(const float2* pos, const int* count, const NearKernel& near, float2* force,
                      cudaStream_t stream) const;
  // The build alone (for the tests).
  void build(const float2* pos, const int* count, cudaStream_t stream) const;

  const MapDims& dims() const { return dims_; }
  const unsigned long long* map() const { return map_; }
  const int* max_displacement() const { return max_displacement_; }

 private:
  MapDims dims_;
  int capacity_ = 0;
  int blocks_ = 1;
  unsigned long long* map_ = nullptr;
  int* max_displacement_ = nullptr;
};

}  // namespace sp::halftone
