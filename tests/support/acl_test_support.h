// Helpers for tests that drive nnplug through its public C API.
#pragma once

#include <acl/acl.h>
#include <aclnn/acl_meta.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace nnplug::test {

// A fresh folder under the system temp dir, removed when the object goes.
class TempFolder {
public:
    TempFolder();
    ~TempFolder();
    const std::filesystem::path& path() const { return path_; }
    // Writes text to name inside the folder and returns the file's path.
    std::filesystem::path write(const std::string& name, const std::string& text) const;

private:
    std::filesystem::path path_;
};

// Sets an environment variable for the lifetime of the object, then restores it.
class ScopedEnvironment {
public:
    ScopedEnvironment(const char* name, const char* value);  // null value: unset
    ~ScopedEnvironment();

private:
    std::string name_;
    bool had_value_;
    std::string old_value_;
};

// A fixture whose tests run between aclInit(config) and aclFinalize; the config is
// written from config_text() (empty: the built-in default path is used).
class RuntimeTest : public ::testing::Test {
protected:
    void SetUp() override;
    void TearDown() override;
    virtual std::string config_text() const { return ""; }
    TempFolder folder_;
};

// Bytes per element of the floating dtypes used in the tests.
size_t element_size(aclDataType dtype);
// Encodes floats to a dtype's bytes (round to nearest even) and back.
std::vector<uint8_t> encode(const std::vector<float>& values, aclDataType dtype);
std::vector<float> decode(const std::vector<uint8_t>& bytes, aclDataType dtype);

// Strides of a contiguous (row-major) tensor.
std::vector<int64_t> contiguous_strides(const std::vector<int64_t>& shape);
int64_t element_count(const std::vector<int64_t>& shape);

// A device buffer plus an aclTensor view over it; frees both.
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
    // The whole storage, read back and decoded to float.
    std::vector<float> storage() const;
    std::vector<uint8_t> storage_bytes() const;

private:
    aclDataType dtype_;
    size_t bytes_ = 0;
    void* device_ = nullptr;
    aclTensor* tensor_ = nullptr;
};

// The two BCE ops through run_op (op_catalog.h), arguments in signature order.
aclnnStatus run_backward(const aclTensor* grad, const aclTensor* self, const aclTensor* target,
                         const aclTensor* weight, int64_t reduction, aclTensor* out);
aclnnStatus run_forward(const aclTensor* self, const aclTensor* target, const aclTensor* weight,
                        int64_t reduction, aclTensor* out);

}  // namespace nnplug::test
