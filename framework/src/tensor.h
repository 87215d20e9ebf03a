// aclTensor: a view (shape, strides, offset) over a storage buffer.
#pragma once

#include <aclnn/acl_meta.h>

#include <cstdint>
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

// "[4,5]"; "[]" for a 0-d tensor.
std::string shape_string(const std::vector<int64_t>& dims);
// "float32", "int32", ...
const char* dtype_name(aclDataType dtype);
const char* format_name(aclFormat format);

}  // namespace nnplug
