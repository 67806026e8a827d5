#pragma once
// The DLPack structs, as the DLPack specification (v1.0, dlpack.h) lays them
// out: both the legacy DLManagedTensor ("dltensor" capsules) and the
// versioned DLManagedTensorVersioned ("dltensor_versioned"). Declared here
// because Debian 12's libdlpack-dev is 0.6, which has no versioned struct, and
// the GPU machine has no DLPack header at all; the layout is a stable ABI.
#include <cstdint>

namespace stylepipe::dlpack {

enum DeviceType : int32_t { kCPU = 1, kCUDA = 2, kCUDAHost = 3, kCUDAManaged = 13 };
enum DataTypeCode : uint8_t { kInt = 0, kUInt = 1, kFloat = 2, kBfloat = 4 };

struct Device {
  int32_t device_type;
  int32_t device_id;
};

struct DataType {
  uint8_t code;
  uint8_t bits;
  uint16_t lanes;
};

struct Tensor {
  void* data;
  Device device;
  int32_t ndim;
  DataType dtype;
  int64_t* shape;
  int64_t* strides;  // in elements; null: compact row-major
  uint64_t byte_offset;
};

struct ManagedTensor {
  Tensor dl_tensor;
  void* manager_ctx;
  void (*deleter)(ManagedTensor* self);
};

struct PackVersion {
  uint32_t major;
  uint32_t minor;
};

inline constexpr uint64_t kFlagReadOnly = 1ull << 0;

struct ManagedTensorVersioned {
  PackVersion version;
  void* manager_ctx;
  void (*deleter)(ManagedTensorVersioned* self);
  uint64_t flags;
  Tensor dl_tensor;
};

}  // namespace stylepipe::dlpack
