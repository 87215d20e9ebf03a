// CANN's `enum Reduction` (aclnnop/aclnn_binary_cross_entropy.h) in code written as for CANN:
// C (cann_reduction_from_c.c) and C++, with every public header, the plugin SDK and GoogleTest.
#include <acl/acl.h>
#include <aclnn/acl_meta.h>
#include <aclnnop/aclnn_binary_cross_entropy.h>
#include <aclnnop/aclnn_binary_cross_entropy_backward.h>
#include <aclnnop/aclnn_binary_cross_entropy_with_logits.h>
#include <aclnnop/aclnn_binary_cross_entropy_with_logits_backward.h>
#include <aclnnop/aclnn_binary_cross_entropy_with_logits_target_backward.h>
#include <gtest/gtest.h>
#include <nnplug/plugin.h>
#include <nnplug/plugin_support.h>

#include <cmath>
#include <cstdint>
#include <type_traits>

#include "acl_test_support.h"

extern "C" aclnnStatus nnplug_test_reduced_bce_from_c(enum Reduction reduction, float* result);

static_assert(Reduction::None == 0 && Reduction::Mean == 1 && Reduction::Sum == 2,
              "CANN's values, the reduction argument's meaning");
static_assert(std::is_enum_v<Reduction> && !std::is_convertible_v<int, Reduction>,
              "an unscoped enum, as CANN declares it");

namespace {

class CannReduction : public nnplug::test::RuntimeTest {};

// -(ln 0.75) for each of the two elements.
const double kElementLoss = -std::log(0.75);

TEST_F(CannReduction, MeanAndSumFromCReduceAsTheirNamesSay) {
    float mean = 0.0f;
    float sum = 0.0f;
    ASSERT_EQ(nnplug_test_reduced_bce_from_c(Mean, &mean), ACLNN_SUCCESS) << aclGetRecentErrMsg();
    ASSERT_EQ(nnplug_test_reduced_bce_from_c(Sum, &sum), ACLNN_SUCCESS) << aclGetRecentErrMsg();
    EXPECT_NEAR(mean, kElementLoss, 1e-6);
    EXPECT_NEAR(sum, 2 * kElementLoss, 1e-6);
}

TEST_F(CannReduction, NoneFromCNeedsAnOutputOfSelfsShape) {
    float unused = 0.0f;
    EXPECT_EQ(nnplug_test_reduced_bce_from_c(None, &unused), ACLNN_ERR_PARAM_INVALID);
}

TEST_F(CannReduction, PassesAsTheInt64ArgumentInCpp) {
    // CANN samples write `int64_t reduction = Mean;` and pass it on.
    const int64_t reduction = Mean;
    float self_data[2] = {0.25f, 0.75f};
    float target_data[2] = {0.0f, 1.0f};
    float out_data[1] = {0.0f};
    const int64_t two = 2, one = 1, stride = 1;
    aclTensor* self = aclCreateTensor(&two, 1, ACL_FLOAT, &stride, 0, ACL_FORMAT_ND, &two, 1, self_data);
    aclTensor* target = aclCreateTensor(&two, 1, ACL_FLOAT, &stride, 0, ACL_FORMAT_ND, &two, 1, target_data);
    aclTensor* out = aclCreateTensor(&one, 1, ACL_FLOAT, &stride, 0, ACL_FORMAT_ND, &one, 1, out_data);
    EXPECT_EQ(nnplug::test::run_forward(self, target, nullptr, reduction, out), ACLNN_SUCCESS)
        << aclGetRecentErrMsg();
    EXPECT_NEAR(out_data[0], kElementLoss, 1e-6);
    aclDestroyTensor(self);
    aclDestroyTensor(target);
    aclDestroyTensor(out);
}

}  // namespace
