#include "acl_test_support.h"

#include <nnplug/dtype_convert.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <stdexcept>

#include "op_catalog.h"

namespace nnplug::test {

TempFolder::TempFolder() {
    static std::atomic<int> counter{0};
    path_ = std::filesystem::temp_directory_path() /
            ("nnplug-test-" + std::to_string(getpid()) + "-" + std::to_string(counter++));
    std::filesystem::create_directories(path_);
}

TempFolder::~TempFolder() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
}

std::filesystem::path TempFolder::write(const std::string& name, const std::string& text) const {
    const auto file = path_ / name;
    std::ofstream(file) << text;
    return file;
}

ScopedEnvironment::ScopedEnvironment(const char* name, const char* value) : name_(name) {
    const char* old = std::getenv(name);
    had_value_ = old != nullptr;
    if (old) old_value_ = old;
    if (value)
        setenv(name, value, 1);
    else
        unsetenv(name);
}

ScopedEnvironment::~ScopedEnvironment() {
    if (had_value_)
        setenv(name_.c_str(), old_value_.c_str(), 1);
    else
        unsetenv(name_.c_str());
}

void RuntimeTest::SetUp() {
    const std::string text = config_text();
    const std::string path = text.empty() ? std::string() : folder_.write("config.yaml", text).string();
    ASSERT_EQ(aclInit(path.empty() ? nullptr : path.c_str()), ACL_SUCCESS) << aclGetRecentErrMsg();
    ASSERT_EQ(aclrtSetDevice(0), ACL_SUCCESS) << aclGetRecentErrMsg();
}

void RuntimeTest::TearDown() { EXPECT_EQ(aclFinalize(), ACL_SUCCESS) << aclGetRecentErrMsg(); }

size_t element_size(aclDataType dtype) { return dtype == ACL_FLOAT ? 4 : 2; }

std::vector<uint8_t> encode(const std::vector<float>& values, aclDataType dtype) {
    std::vector<uint8_t> bytes(values.size() * element_size(dtype));
    for (size_t i = 0; i < values.size(); ++i) {
        if (dtype == ACL_FLOAT) {
            std::memcpy(&bytes[i * 4], &values[i], 4);
        } else {
            const uint16_t half = dtype == ACL_FLOAT16 ? f32_to_f16(values[i]) : f32_to_bf16(values[i]);
            std::memcpy(&bytes[i * 2], &half, 2);
        }
    }
    return bytes;
}

std::vector<float> decode(const std::vector<uint8_t>& bytes, aclDataType dtype) {
    std::vector<float> values(bytes.size() / element_size(dtype));
    for (size_t i = 0; i < values.size(); ++i) {
        if (dtype == ACL_FLOAT) {
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
    for (int64_t i = static_cast<int64_t>(shape.size()) - 2; i >= 0; --i) strides[i] = strides[i + 1] * shape[i + 1];
    return strides;
}

int64_t element_count(const std::vector<int64_t>& shape) {
    int64_t count = 1;
    for (int64_t dim : shape) count *= dim;
    return count;
}

DeviceTensor::DeviceTensor(const std::vector<float>& values, const std::vector<int64_t>& shape, aclDataType dtype)
    : DeviceTensor(values, shape, shape, contiguous_strides(shape), 0, dtype) {}

DeviceTensor::DeviceTensor(const std::vector<float>& storage_values, const std::vector<int64_t>& storage_shape,
                           const std::vector<int64_t>& view, const std::vector<int64_t>& strides, int64_t offset,
                           aclDataType dtype)
    : DeviceTensor(encode(storage_values, dtype), storage_shape, view, strides, offset, dtype) {}

DeviceTensor::DeviceTensor(const std::vector<uint8_t>& bytes, const std::vector<int64_t>& storage_shape,
                           const std::vector<int64_t>& view, const std::vector<int64_t>& strides, int64_t offset,
                           aclDataType dtype)
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

std::vector<float> DeviceTensor::storage() const { return decode(storage_bytes(), dtype_); }

aclnnStatus run_backward(const aclTensor* grad, const aclTensor* self, const aclTensor* target,
                         const aclTensor* weight, int64_t reduction, aclTensor* out) {
    return run_op(op_named("backward"), {grad, self, target, weight, out}, {reduction});
}

aclnnStatus run_forward(const aclTensor* self, const aclTensor* target, const aclTensor* weight, int64_t reduction,
                        aclTensor* out) {
    return run_op(op_named("forward"), {self, target, weight, out}, {reduction});
}

}  // namespace nnplug::test
