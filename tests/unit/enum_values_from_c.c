/* Calls that pass enum arguments from C, where an aclDataType or aclFormat argument may hold
 * any int (a C++ caller cannot make such a value without undefined behaviour). */
#include <aclnn/acl_meta.h>

aclTensor* nnplug_test_tensor_from_c(int32_t dtype, int32_t format, void* data) {
    static const int64_t dims[] = {2, 3};
    static const int64_t strides[] = {3, 1};
    return aclCreateTensor(dims, 2, (aclDataType)dtype, strides, 0, (aclFormat)format, dims, 2, data);
}

size_t nnplug_test_dtype_size_from_c(int32_t dtype) {
    return aclDataTypeSize((aclDataType)dtype);
}
