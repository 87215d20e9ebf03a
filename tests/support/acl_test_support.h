// Helpers for tests that drive nnplug through its public C API.
#pragma once

#include <acl/acl.h>
#include <aclnn/acl_meta.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "device_tensor.h"
#include "op_catalog.h"

namespace nnplug::test {

// The tensors, dtype helpers and op catalog of the conformance kit (conformance/), as
// nnplug::test::DeviceTensor and so on.
using namespace nnplug::conformance;

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

// The two BCE ops through run_op (op_catalog.h), arguments in signature order.
aclnnStatus run_backward(const aclTensor* grad, const aclTensor* self, const aclTensor* target,
                         const aclTensor* weight, int64_t reduction, aclTensor* out);
aclnnStatus run_forward(const aclTensor* self, const aclTensor* target, const aclTensor* weight,
                        int64_t reduction, aclTensor* out);

// The most recent error message, and a vector of `count` copies of value: what every op
// test asks for.
inline std::string message() {
    return aclGetRecentErrMsg();
}
inline std::vector<float> filled(size_t count, float value) {
    return std::vector<float>(count, value);
}

}  // namespace nnplug::test
