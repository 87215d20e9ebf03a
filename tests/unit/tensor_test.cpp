// aclCreateTensor's bounds checks: every refusal returns null with a specific message.
#include <aclnn/acl_meta.h>
#include <gtest/gtest.h>

#include <limits>
#include <string>
#include <vector>

extern "C" {
aclTensor* nnplug_test_tensor_from_c(int32_t dtype, int32_t format, void* data);
size_t nnplug_test_dtype_size_from_c(int32_t dtype);
}

namespace {

aclTensor* create(std::vector<int64_t> view, std::vector<int64_t> strides, int64_t offset,
                  std::vector<int64_t> storage, aclDataType dtype = ACL_FLOAT) {
    static float data[64];
    return aclCreateTensor(view.data(), view.size(), dtype, strides.data(), offset, ACL_FORMAT_ND,
                           storage.data(), storage.size(), data);
}

std::string message() {
    return aclGetRecentErrMsg();
}

TEST(CreateTensor, ContiguousViewIsAccepted) {
    aclTensor* tensor = create({2, 3}, {3, 1}, 0, {6});
    ASSERT_NE(tensor, nullptr);
    int64_t* dims = nullptr;
    uint64_t count = 0;
    ASSERT_EQ(aclGetViewShape(tensor, &dims, &count), ACLNN_SUCCESS);
    EXPECT_EQ(count, 2u);
    EXPECT_EQ(dims[0], 2);
    EXPECT_EQ(dims[1], 3);
    delete[] dims;
    EXPECT_EQ(aclDestroyTensor(tensor), ACLNN_SUCCESS);
}

TEST(CreateTensor, TransposedAndExpandedViewsAreAccepted) {
    aclTensor* transposed = create({3, 2}, {1, 3}, 0, {6});
    ASSERT_NE(transposed, nullptr);
    aclDestroyTensor(transposed);
    aclTensor* expanded = create({4, 3}, {0, 1}, 0, {3});
    ASSERT_NE(expanded, nullptr);
    aclDestroyTensor(expanded);
}

TEST(CreateTensor, ZeroDimensionalTensorHoldsOneElement) {
    static float value = 1.0f;
    aclTensor* scalar = aclCreateTensor(nullptr, 0, ACL_FLOAT, nullptr, 0, ACL_FORMAT_ND, nullptr, 0, &value);
    ASSERT_NE(scalar, nullptr) << "0-d storage holds one element: " << aclGetRecentErrMsg();
    aclDestroyTensor(scalar);
    const int64_t empty_storage[] = {0};
    EXPECT_EQ(aclCreateTensor(nullptr, 0, ACL_FLOAT, nullptr, 0, ACL_FORMAT_ND, empty_storage, 1, &value),
              nullptr)
        << "a 0-d view needs one element of storage";
    EXPECT_EQ(aclCreateTensor(nullptr, 0, ACL_FLOAT, nullptr, 1, ACL_FORMAT_ND, nullptr, 0, &value), nullptr);
}

TEST(CreateTensor, EmptyViewFitsAnyStorage) {
    aclTensor* empty = create({0, 5}, {5, 1}, 0, {0});
    ASSERT_NE(empty, nullptr) << message();
    aclDestroyTensor(empty);
}

TEST(CreateTensor, ViewPastStorageIsRefused) {
    EXPECT_EQ(create({2, 3}, {3, 1}, 1, {6}), nullptr);
    EXPECT_NE(message().find("past storage"), std::string::npos) << message();
    EXPECT_EQ(create({2, 4}, {3, 1}, 0, {6}), nullptr);
}

TEST(CreateTensor, NegativeDimensionOrStrideIsRefused) {
    EXPECT_EQ(create({-1, 3}, {3, 1}, 0, {6}), nullptr);
    EXPECT_NE(message().find("negative"), std::string::npos) << message();
    EXPECT_EQ(create({2, 3}, {-3, 1}, 0, {6}), nullptr);
    EXPECT_EQ(create({2, 3}, {3, 1}, -1, {6}), nullptr);
    EXPECT_EQ(create({2, 3}, {3, 1}, 0, {-6}), nullptr);
}

TEST(CreateTensor, OverflowingCountsAreRefused) {
    const int64_t huge = std::numeric_limits<int64_t>::max() / 2;
    EXPECT_EQ(create({huge, 4}, {4, 1}, 0, {6}), nullptr);
    EXPECT_NE(message().find("overflow"), std::string::npos) << message();
    EXPECT_EQ(create({2}, {1}, 0, {huge, 4}), nullptr);
    EXPECT_EQ(create({2}, {1}, 0, {huge / 4}), nullptr) << "the byte count overflows";
}

TEST(CreateTensor, MoreThanEightDimensionsAreAcceptedHere) {
    std::vector<int64_t> dims(9, 1), strides(9, 1);
    aclTensor* tensor = create(dims, strides, 0, {1});
    ASSERT_NE(tensor, nullptr) << "the ops refuse more than 8 dims, not aclCreateTensor";
    aclDestroyTensor(tensor);
}

TEST(CreateTensor, NullArraysWithCountsAreRefused) {
    const int64_t storage[] = {4};
    EXPECT_EQ(aclCreateTensor(nullptr, 2, ACL_FLOAT, nullptr, 0, ACL_FORMAT_ND, storage, 1, nullptr),
              nullptr);
    EXPECT_NE(message().find("null"), std::string::npos) << message();
}

TEST(CreateTensor, DestroyingNullIsHarmless) {
    EXPECT_EQ(aclDestroyTensor(nullptr), ACLNN_SUCCESS);
}

// dtype and format values outside their enums, passed from C, are read as integers and
// refused; under UBSan (NNPLUG_FUZZ, NNPLUG_SANITIZE) no enum load of them is reported
// (found by fuzz_ops: aclDataTypeSize loaded its argument as an aclDataType).
TEST(CreateTensor, DtypeAndFormatOutsideTheirEnumsAreRefused) {
    static float data[6];
    for (const int32_t dtype :
         {99, 1000, -2, -100, std::numeric_limits<int32_t>::min(), std::numeric_limits<int32_t>::max()}) {
        EXPECT_EQ(nnplug_test_dtype_size_from_c(dtype), 0u) << dtype;
        EXPECT_EQ(nnplug_test_tensor_from_c(dtype, ACL_FORMAT_ND, data), nullptr) << dtype;
        EXPECT_EQ(message(),
                  "aclCreateTensor: dataType " + std::to_string(dtype) + " has no fixed element size");
    }
    for (const int32_t format : {5, 99, -2, std::numeric_limits<int32_t>::min()}) {
        EXPECT_EQ(nnplug_test_tensor_from_c(ACL_FLOAT, format, data), nullptr) << format;
        EXPECT_EQ(message(), "aclCreateTensor: format " + std::to_string(format) + " is not an aclFormat");
    }
    EXPECT_EQ(nnplug_test_dtype_size_from_c(ACL_BF16), 2u);
    aclTensor* tensor = nnplug_test_tensor_from_c(ACL_FLOAT16, ACL_FORMAT_NCHW, data);
    ASSERT_NE(tensor, nullptr) << message();
    aclDestroyTensor(tensor);
}

}  // namespace
