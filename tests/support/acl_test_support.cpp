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
    auto file = path_ / name;
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

void RuntimeTest::TearDown() {
    EXPECT_EQ(aclFinalize(), ACL_SUCCESS) << aclGetRecentErrMsg();
}

aclnnStatus run_backward(const aclTensor* grad, const aclTensor* self, const aclTensor* target,
                         const aclTensor* weight, int64_t reduction, aclTensor* out) {
    return run_op(op_named("binary_cross_entropy_backward"), {grad, self, target, weight, out}, {reduction});
}

aclnnStatus run_forward(const aclTensor* self, const aclTensor* target, const aclTensor* weight,
                        int64_t reduction, aclTensor* out) {
    return run_op(op_named("binary_cross_entropy"), {self, target, weight, out}, {reduction});
}

}  // namespace nnplug::test
