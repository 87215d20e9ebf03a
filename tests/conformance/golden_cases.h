// Reads the golden case files of tests/golden/ (see tests/golden/README.md) and runs a case.
#pragma once

#include <acl/acl_base.h>
#include <aclnn/acl_meta.h>

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
    std::string op;                               // an op of the test catalog: "forward", "backward"
    std::vector<int64_t> attrs;                   // the op's integer arguments, in signature order
    std::map<std::string, GoldenTensor> tensors;  // by operand role: gradOutput, self, target, weight, out
    std::vector<uint8_t> expect_bits;             // when given: the output's storage after the op, exactly
    std::vector<double> reference;                // float64 result per view element, or the reduced value

    // The attribute called name (e.g. "reduction"), or fallback when the op has none.
    int64_t attr(const std::string& name, int64_t fallback = 0) const;
};

// What running a case gave: its status and message, and the output's whole storage.
struct GoldenRun {
    aclnnStatus status = ACLNN_SUCCESS;
    std::string message;
    std::vector<uint8_t> output;
};

// Uploads the case's operands to the current device, runs its op through both phases
// and reads the output's storage back.
GoldenRun run_golden_case(const GoldenCase& golden);

// All cases of the file; throws std::runtime_error naming the line of a malformed one.
std::vector<GoldenCase> load_golden_cases(const std::string& file);
// The cases of every *_golden.txt file in folder, in file name order.
std::vector<GoldenCase> load_golden_folder(const std::string& folder);

// The bit pattern of element `index` of a buffer of dtype (float32, float16 or bfloat16).
uint32_t bits_at(const std::vector<uint8_t>& bytes, aclDataType dtype, size_t index);
// The value of a bit pattern of dtype, widened to float.
float value_of(uint32_t bits, aclDataType dtype);
// Distance in units in the last place between two finite values of one dtype.
int64_t ulp_distance(uint32_t a, uint32_t b, aclDataType dtype);

}  // namespace nnplug::test
