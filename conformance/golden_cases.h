// Reads the golden case files (tests/golden/, installed to share/nnplug/conformance; see
// tests/golden/README.md), runs a case through the public API and checks its result.
#pragma once

#include <acl/acl_base.h>
#include <aclnn/acl_meta.h>

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "device_tensor.h"
#include "op_catalog.h"

namespace nnplug::conformance {

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
    std::string op;  // an op of the test catalog: "binary_cross_entropy", "binary_cross_entropy_backward"
    std::vector<AttrArg> attrs;                   // the op's attribute arguments, in signature order
    std::map<std::string, GoldenTensor> tensors;  // by operand role: gradOutput, self, target, weight, out
    std::vector<uint8_t> expect_bits;             // when given: the output's storage after the op, exactly
    // When given (expect_ulps line): the output's storage after the op, each view element
    // within expect_ulps ulps of the output's dtype (plus the scale allowance).
    std::vector<uint8_t> expect_near_bits;
    int64_t expect_ulps = -1;       // -1: no expect_ulps line
    std::vector<double> reference;  // float64 result per view element, or the reduced value
    // When given: per reference value, the magnitude of the terms the float32 expression adds;
    // where they cancel, float32 rounding leaves an error of a few ulps of it (see kScaleEpsilons).
    std::vector<double> scale;

    // The integer attribute called name (e.g. "reduction"), or fallback when the op has none.
    int64_t attr(const std::string& name, int64_t fallback = 0) const;
};

// What running a case gave: its status and message, and the output's whole storage.
struct GoldenRun {
    aclnnStatus status = ACLNN_SUCCESS;
    std::string message;
    std::vector<uint8_t> output;
};

// A case's present operands on the current device.
struct UploadedOperands {
    std::vector<std::unique_ptr<DeviceTensor>> tensors;
    std::vector<const aclTensor*> arguments;  // one per operand of the op, null where absent
    const DeviceTensor* output = nullptr;     // null when the case has no output
    std::vector<const DeviceTensor*> inputs;  // the present operands but the output
};
UploadedOperands upload_operands(const GoldenCase& golden);

// Uploads the case's operands to the current device, runs its op through both phases
// and reads the output's storage back.
GoldenRun run_golden_case(const GoldenCase& golden);

// The whole of a case file; throws std::runtime_error naming the file when it cannot be
// read or is not a regular file (a FIFO or a device planted in --data would block or never end).
std::string read_case_file(const std::string& file);

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
// The spacing of dtype's values at |value| (the ulp of value rounded to dtype): for a finite
// value, the distance from its magnitude to the next larger value of dtype.
double ulp_of(float value, aclDataType dtype);

// The absolute allowance of a case with a scale: kScaleEpsilons float32 epsilons (2^-23) of
// the element's scale, for one float32 evaluation against float64; twice that between two
// float32 evaluations (expect_ulps). The canonical expressions round at most about six times,
// each time by at most half an epsilon of a term no larger than the scale.
constexpr double kScaleEpsilons = 4.0;
double scale_allowance(const GoldenCase& golden, size_t index);

// A float rounded to dtype and widened back.
float rounded_to(float value, aclDataType dtype);
// The relative tolerance of out's dtype against float64 results: a few of its ulps.
double relative_tolerance(aclDataType dtype);

// Why a case's run does not meet its expectations, or "" when it does: the output's storage
// outside its view is untouched; with `expect_bits` the view is exactly those bits (one ulp
// of slack for a mean), with `expect_ulps` within that many ulps; every view element (or the
// mean or sum) is within tolerance of its float64 reference (float32: rtol 1e-5 per element,
// 1e-6 for a mean or sum; float16 and bfloat16: one ulp of the reference rounded to the
// dtype). A case's `scale_f64` adds its absolute allowance. The message names the element.
std::string check_golden_run(const GoldenCase& golden, const GoldenRun& run);

}  // namespace nnplug::conformance
