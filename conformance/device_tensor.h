// Tensors in device memory through the public API only (aclrtMalloc, aclrtMemcpy,
// aclCreateTensor), and the dtype conversions of host data; shared by the conformance kit
// and the test suites.
#pragma once

#include <acl/acl.h>
#include <aclnn/acl_meta.h>

#include <cstdint>
#include <vector>

namespace nnplug::conformance {

// Bytes per element of the floating dtypes (float32 4, float16 and bfloat16 2) and the
// integer ones a target holds (int64 8, int32 4, uint8 1).
size_t element_size(aclDataType dtype);
// Encodes floats to a dtype's bytes (round to nearest even; whole numbers for an integer
// dtype) and back.
std::vector<uint8_t> encode(const std::vector<float>& values, aclDataType dtype);
std::vector<float> decode(const std::vector<uint8_t>& bytes, aclDataType dtype);

// Strides of a contiguous (row-major) tensor.
std::vector<int64_t> contiguous_strides(const std::vector<int64_t>& shape);
int64_t element_count(const std::vector<int64_t>& shape);

// A device buffer plus an aclTensor view over it; frees both. Throws std::runtime_error
// with the runtime's message when an allocation, copy or aclCreateTensor fails.
class DeviceTensor {
public:
    // A contiguous tensor holding values (converted to dtype).
    DeviceTensor(const std::vector<float>& values, const std::vector<int64_t>& shape,
                 aclDataType dtype = ACL_FLOAT);
    // A general view: storage holds storage_values; view, strides and offset in elements.
    DeviceTensor(const std::vector<float>& storage_values, const std::vector<int64_t>& storage_shape,
                 const std::vector<int64_t>& view, const std::vector<int64_t>& strides, int64_t offset,
                 aclDataType dtype);
    // The same from the storage's raw bytes in dtype.
    DeviceTensor(const std::vector<uint8_t>& storage_bytes, const std::vector<int64_t>& storage_shape,
                 const std::vector<int64_t>& view, const std::vector<int64_t>& strides, int64_t offset,
                 aclDataType dtype);
    ~DeviceTensor();
    DeviceTensor(const DeviceTensor&) = delete;
    DeviceTensor& operator=(const DeviceTensor&) = delete;

    aclTensor* get() const { return tensor_; }
    operator aclTensor*() const { return tensor_; }
    void* data() const { return device_; }
    size_t bytes() const { return bytes_; }
    // The whole storage, read back and decoded to float.
    std::vector<float> storage() const;
    std::vector<uint8_t> storage_bytes() const;
    // Overwrites the whole storage with bytes (of the storage's size).
    void upload(const std::vector<uint8_t>& bytes) const;

private:
    aclDataType dtype_;
    size_t bytes_ = 0;
    void* device_ = nullptr;
    aclTensor* tensor_ = nullptr;
};

}  // namespace nnplug::conformance
