// Reads tests/golden/bce_golden.txt (see tests/golden/README.md).
#pragma once

#include <acl/acl_base.h>

#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace nnplug::test {

struct GoldenTensor {
    bool present = false;
    aclDataType dtype = ACL_FLOAT;
    std::vector<int64_t> view, strides, storage_shape;
    int64_t offset = 0;
    std::vector<uint8_t> storage;  // raw bytes in dtype

    // Storage indices of the view's elements, row-major.
    std::vector<int64_t> view_indices() const;
};

struct GoldenCase {
    std::string name;
    bool backward = false;
    int64_t reduction = 0;
    std::map<std::string, GoldenTensor> tensors;  // gradOutput, self, target, weight, out
    std::vector<uint8_t> expect_bits;             // backward: out's storage after the op
    std::vector<double> reference;                // per view element, or the reduced value
};

// All cases of the file; throws std::runtime_error naming the line of a malformed one.
std::vector<GoldenCase> load_golden_cases(const std::string& file);

// The bit pattern of element `index` of a buffer of dtype (float32, float16 or bfloat16).
uint32_t bits_at(const std::vector<uint8_t>& bytes, aclDataType dtype, size_t index);
// The value of a bit pattern of dtype, widened to float.
float value_of(uint32_t bits, aclDataType dtype);
// Distance in units in the last place between two finite values of one dtype.
int64_t ulp_distance(uint32_t a, uint32_t b, aclDataType dtype);

}  // namespace nnplug::test
