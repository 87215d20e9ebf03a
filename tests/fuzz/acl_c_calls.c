/* aclCreateTensor and aclGetDataType called from C, where an enum argument may hold any
 * int: the fuzzer passes dtype and format values outside aclDataType and aclFormat as a C
 * program can, without the C++ undefined behaviour of making such an enum value. */
#include <aclnn/acl_meta.h>

aclTensor* nnplug_fuzz_create_tensor(const int64_t* view_dims, uint64_t view_rank, int32_t dtype,
                                     const int64_t* strides, int64_t offset, int32_t format,
                                     const int64_t* storage_dims, uint64_t storage_rank, void* data) {
    return aclCreateTensor(view_dims, view_rank, (aclDataType)dtype, strides, offset, (aclFormat)format,
                           storage_dims, storage_rank, data);
}

int32_t nnplug_fuzz_data_type(const aclTensor* tensor, int32_t* dtype) {
    aclDataType value = ACL_DT_UNDEFINED;
    const aclnnStatus status = aclGetDataType(tensor, &value);
    *dtype = (int32_t)value;
    return status;
}

size_t nnplug_fuzz_dtype_size(int32_t dtype) {
    return aclDataTypeSize((aclDataType)dtype);
}
