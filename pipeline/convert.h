#pragma once
// Conversions between codec-side pictures (PlanarView) and the pipeline's
// RGBA8 working format, on the CPU and on CUDA, bit-identical.
//
// Colour: BT.601/709/2020 matrices, limited or full range (ITU-T H.273 code
// ranges; 10-bit full range uses 1023 steps). Fixed-point integer math,
// rounded once per output value (see convert_pixel.h).
// Alpha: 255 when the source has none; ignored when writing formats without
// alpha (bgr0's X byte is written as 255).
// Gray: RGB -> Y through the matrix; Y -> RGB replicates the range-expanded luma.
// 4:2:0 chroma sits at the centre of its 2x2 luma block (swscale's default
// siting): output chroma is the 2x2 box average; input chroma is upsampled
// bilinearly (weights 9,3,3,1 / 16 from the four nearest samples). Odd sizes
// behave as if the last column/row were repeated.

#include "pipeline/cuda_handles.h"
#include "pipeline/image.h"

namespace sp {

void convert_to_rgba_cpu(const PlanarView& src, const ColorSpec& color, const RgbaView& dst);
void convert_from_rgba_cpu(const RgbaView& src, const ColorSpec& color, const PlanarView& dst);

// CUDA builds only (convert.cu). Device pointers in both views; enqueued on `stream`, never synchronizes.
void convert_to_rgba_cuda(const PlanarView& src, const ColorSpec& color, const RgbaView& dst, cudaStream_t stream);
void convert_from_rgba_cuda(const RgbaView& src, const ColorSpec& color, const PlanarView& dst, cudaStream_t stream);

// Bytes one conversion between `format` and RGBA must move at `size`: the
// picture's planes once plus the RGBA frame once (the bench's bandwidth floor).
double convert_floor_bytes(PixelFormat format, Size size);

// Throws sp::Error (internal) unless the two pictures have the same size.
void check_convert_sizes(const PlanarView& planar, const RgbaView& rgba);

}  // namespace sp
