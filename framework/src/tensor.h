// aclTensor: a view (shape, strides, offset) over a storage buffer.
#pragma once

#include <aclnn/acl_meta.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

struct aclTensor {
    std::vector<int64_t> view_dims;
    std::vector<int64_t> strides;  // elements
    int64_t offset = 0;            // elements
    aclDataType dtype = ACL_FLOAT;
    aclFormat format = ACL_FORMAT_ND;
    std::vector<int64_t> storage_dims;
    int64_t storage_elements = 0;
    void* data = nullptr;

    int64_t element_count() const;
    bool is_empty() const { return element_count() == 0; }
};

namespace nnplug {

// An enum argument's value as an integer, read without loading the enum: a caller may
// pass any integer, and a range check on the enum itself would be undefined behaviour.
// Taken by reference: passing the enum by value would load it (UBSan's enum check).
template <typename Enum>
int32_t enum_bits(const Enum& value) {
    static_assert(sizeof(Enum) == sizeof(int32_t));
    int32_t bits;
    std::memcpy(&bits, &value, sizeof bits);
    return bits;
}

// Whether tensor was made by aclCreateTensor and not yet destroyed. Calls check it
// before reading a tensor, so a destroyed one is reported instead of read.
bool tensor_is_live(const aclTensor* tensor);

// Keeps a call's live tensors from being freed while the call reads them: an
// aclDestroyTensor racing the call drops the user's reference at once (the tensor stops
// being live) and the memory is freed when the last hold ends. Tensors that were not live
// when the hold began are not held; held(i) tells which.
class TensorHold {
public:
    TensorHold(const aclTensor* const* tensors, size_t count);
    ~TensorHold();
    TensorHold(const TensorHold&) = delete;
    TensorHold& operator=(const TensorHold&) = delete;

    bool held(size_t index) const { return held_[index]; }

    static constexpr size_t kMaxTensors = 16;

private:
    const aclTensor* tensors_[kMaxTensors] = {};
    bool held_[kMaxTensors] = {};
    size_t count_ = 0;
};

// "[4,5]"; "[]" for a 0-d tensor.
std::string shape_string(const std::vector<int64_t>& dims);
// "float32", "int32", ...
const char* dtype_name(aclDataType dtype);
const char* format_name(aclFormat format);

}  // namespace nnplug
