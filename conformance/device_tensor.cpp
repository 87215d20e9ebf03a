#include "device_tensor.h"

#include <nnplug/dtype_convert.h>

#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <string>

namespace nnplug::conformance {

size_t element_size(aclDataType dtype) {
    switch (dtype) {
        case ACL_FLOAT:
        case ACL_INT32:
            return 4;
        case ACL_INT64:
            return 8;
        case ACL_UINT8:
            return 1;
        default:
            return 2;
    }
}

namespace {

// An integer dtype's element i from a whole number held as a float, and back.
void encode_integer(float value, aclDataType dtype, uint8_t* element) {
    if (dtype == ACL_INT64) {
        const auto v = static_cast<int64_t>(value);
        std::memcpy(element, &v, sizeof v);
    } else if (dtype == ACL_INT32) {
        const auto v = static_cast<int32_t>(value);
        std::memcpy(element, &v, sizeof v);
    } else {
        *element = static_cast<uint8_t>(value);
    }
}

float decode_integer(const uint8_t* element, aclDataType dtype) {
    if (dtype == ACL_INT64) {
        int64_t v;
        std::memcpy(&v, element, sizeof v);
        return static_cast<float>(v);
    }
    if (dtype == ACL_INT32) {
        int32_t v;
        std::memcpy(&v, element, sizeof v);
        return static_cast<float>(v);
    }
    return static_cast<float>(*element);
}

bool is_integer(aclDataType dtype) {
    return dtype == ACL_INT64 || dtype == ACL_INT32 || dtype == ACL_UINT8;
}

}  // namespace

std::vector<uint8_t> encode(const std::vector<float>& values, aclDataType dtype) {
    const size_t size = element_size(dtype);
    std::vector<uint8_t> bytes(values.size() * size);
    for (size_t i = 0; i < values.size(); ++i) {
        if (is_integer(dtype)) {
            encode_integer(values[i], dtype, &bytes[i * size]);
        } else if (dtype == ACL_FLOAT) {
            std::memcpy(&bytes[i * 4], &values[i], 4);
        } else {
            const uint16_t half = dtype == ACL_FLOAT16 ? f32_to_f16(values[i]) : f32_to_bf16(values[i]);
            std::memcpy(&bytes[i * 2], &half, 2);
        }
    }
    return bytes;
}

std::vector<float> decode(const std::vector<uint8_t>& bytes, aclDataType dtype) {
    const size_t size = element_size(dtype);
    std::vector<float> values(bytes.size() / size);
    for (size_t i = 0; i < values.size(); ++i) {
        if (is_integer(dtype)) {
            values[i] = decode_integer(&bytes[i * size], dtype);
        } else if (dtype == ACL_FLOAT) {
            std::memcpy(&values[i], &bytes[i * 4], 4);
        } else {
            uint16_t half;
            std::memcpy(&half, &bytes[i * 2], 2);
            values[i] = dtype == ACL_FLOAT16 ? f16_to_f32(half) : bf16_to_f32(half);
        }
    }
    return values;
}

std::vector<int64_t> contiguous_strides(const std::vector<int64_t>& shape) {
    std::vector<int64_t> strides(shape.size(), 1);
    for (int64_t i = static_cast<int64_t>(shape.size()) - 2; i >= 0; --i)
        strides[i] = strides[i + 1] * shape[i + 1];
    return strides;
}

int64_t element_count(const std::vector<int64_t>& shape) {
    int64_t count = 1;
    for (int64_t dim : shape) count *= dim;
    return count;
}

DeviceTensor::DeviceTensor(const std::vector<float>& values, const std::vector<int64_t>& shape,
                           aclDataType dtype)
    : DeviceTensor(values, shape, shape, contiguous_strides(shape), 0, dtype) {}

DeviceTensor::DeviceTensor(const std::vector<float>& storage_values,
                           const std::vector<int64_t>& storage_shape, const std::vector<int64_t>& view,
                           const std::vector<int64_t>& strides, int64_t offset, aclDataType dtype)
    : DeviceTensor(encode(storage_values, dtype), storage_shape, view, strides, offset, dtype) {}

DeviceTensor::DeviceTensor(const std::vector<uint8_t>& bytes, const std::vector<int64_t>& storage_shape,
                           const std::vector<int64_t>& view, const std::vector<int64_t>& strides,
                           int64_t offset, aclDataType dtype)
    : dtype_(dtype) {
    bytes_ = bytes.size();
    // aclrtMalloc refuses 0 bytes; an empty tensor still gets a small buffer.
    if (aclrtMalloc(&device_, std::max<size_t>(bytes_, 32), ACL_MEM_MALLOC_HUGE_FIRST) != ACL_SUCCESS)
        throw std::runtime_error(std::string("aclrtMalloc: ") + aclGetRecentErrMsg());
    if (bytes_ > 0 &&
        aclrtMemcpy(device_, bytes_, bytes.data(), bytes_, ACL_MEMCPY_HOST_TO_DEVICE) != ACL_SUCCESS)
        throw std::runtime_error(std::string("aclrtMemcpy: ") + aclGetRecentErrMsg());
    tensor_ = aclCreateTensor(view.data(), view.size(), dtype, strides.data(), offset, ACL_FORMAT_ND,
                              storage_shape.data(), storage_shape.size(), device_);
    if (tensor_ == nullptr) throw std::runtime_error(std::string("aclCreateTensor: ") + aclGetRecentErrMsg());
}

DeviceTensor::~DeviceTensor() {
    aclDestroyTensor(tensor_);
    aclrtFree(device_);
}

std::vector<uint8_t> DeviceTensor::storage_bytes() const {
    std::vector<uint8_t> bytes(bytes_);
    if (bytes_ > 0) aclrtMemcpy(bytes.data(), bytes_, device_, bytes_, ACL_MEMCPY_DEVICE_TO_HOST);
    return bytes;
}

std::vector<float> DeviceTensor::storage() const {
    return decode(storage_bytes(), dtype_);
}

void DeviceTensor::upload(const std::vector<uint8_t>& bytes) const {
    if (bytes.size() != bytes_) throw std::runtime_error("DeviceTensor::upload: wrong size");
    if (bytes_ > 0 &&
        aclrtMemcpy(device_, bytes_, bytes.data(), bytes_, ACL_MEMCPY_HOST_TO_DEVICE) != ACL_SUCCESS)
        throw std::runtime_error(std::string("aclrtMemcpy: ") + aclGetRecentErrMsg());
}

}  // namespace nnplug::conformance
