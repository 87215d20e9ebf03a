// nnplug_op_get_workspace_size: an op called by its published schema (the Python package's
// path) does what its own GetWorkspaceSize does, and refuses attributes of another type.
#include <acl/acl.h>
#include <aclnnop/aclnn_mse_loss.h>
#include <gtest/gtest.h>
#include <nnplug/op_schema.h>

#include <cstring>
#include <string>
#include <vector>

#include "acl_test_support.h"
#include "device_tensor.h"
#include "op_catalog.h"

namespace nnplug::test {
namespace {

using conformance::DeviceTensor;

class CallBySchema : public RuntimeTest {};

const nnplug_op_schema* schema_named(const char* api) {
    for (size_t i = 0; i < nnplug_op_schema_count(); ++i)
        if (std::strcmp(nnplug_op_schema_at(i)->api, api) == 0) return nnplug_op_schema_at(i);
    return nullptr;
}

nnplug_attr_arg int64_arg(int64_t value) {
    nnplug_attr_arg arg{};
    arg.type = NNPLUG_ATTR_ARG_INT64;
    arg.i = value;
    return arg;
}

// Both phases of a first phase's result on the default stream.
aclnnStatus finish(aclnnStatus first, uint64_t workspace_size, aclOpExecutor* executor) {
    return conformance::run_executor(first, workspace_size, executor, aclnnMseLoss);
}

TEST_F(CallBySchema, GivesWhatTheOpsOwnEntryGives) {
    const nnplug_op_schema* mse = schema_named("aclnnMseLoss");
    ASSERT_NE(mse, nullptr);
    DeviceTensor self({0.5f, -1.0f, 2.0f}, {3}), target({1.0f, 1.0f, 1.0f}, {3});
    DeviceTensor by_schema({0.0f}, {}), by_entry({0.0f}, {});
    const aclTensor* tensors[] = {self, target, by_schema};
    const nnplug_attr_arg attrs[] = {int64_arg(NNPLUG_REDUCTION_SUM)};
    uint64_t workspace_size = 0;
    aclOpExecutor* executor = nullptr;
    const aclnnStatus first = nnplug_op_get_workspace_size(mse, tensors, attrs, &workspace_size, &executor);
    ASSERT_EQ(finish(first, workspace_size, executor), ACLNN_SUCCESS) << message();
    const aclnnStatus own = aclnnMseLossGetWorkspaceSize(self, target, NNPLUG_REDUCTION_SUM, by_entry,
                                                         &workspace_size, &executor);
    ASSERT_EQ(finish(own, workspace_size, executor), ACLNN_SUCCESS) << message();
    EXPECT_EQ(by_schema.storage(), by_entry.storage());
    EXPECT_FLOAT_EQ(by_schema.storage()[0], 0.25f + 4.0f + 1.0f);
}

TEST_F(CallBySchema, RefusesAnAttributeOfAnotherTypeByName) {
    const nnplug_op_schema* mse = schema_named("aclnnMseLoss");
    ASSERT_NE(mse, nullptr);
    DeviceTensor self({0.5f}, {1}), target({1.0f}, {1}), out({0.0f}, {1});
    const aclTensor* tensors[] = {self, target, out};
    nnplug_attr_arg attrs[] = {int64_arg(0)};
    attrs[0].type = NNPLUG_ATTR_ARG_DOUBLE;
    uint64_t workspace_size = 0;
    aclOpExecutor* executor = nullptr;
    EXPECT_EQ(nnplug_op_get_workspace_size(mse, tensors, attrs, &workspace_size, &executor),
              ACLNN_ERR_PARAM_INVALID);
    EXPECT_NE(message().find("aclnnMseLoss: attribute 0 (reduction) is given as type 1"), std::string::npos)
        << message();
    attrs[0].type = NNPLUG_ATTR_ARG_INT64;
    attrs[0].i = 7;  // then the op's own range check, as its entry would give
    EXPECT_EQ(nnplug_op_get_workspace_size(mse, tensors, attrs, &workspace_size, &executor),
              ACLNN_ERR_PARAM_INVALID);
    EXPECT_NE(message().find("reduction 7"), std::string::npos) << message();
}

TEST_F(CallBySchema, RefusesAnOpThatIsNotAPublishedSchema) {
    nnplug_op_schema copy = *schema_named("aclnnMseLoss");
    uint64_t workspace_size = 0;
    aclOpExecutor* executor = nullptr;
    EXPECT_EQ(nnplug_op_get_workspace_size(nullptr, nullptr, nullptr, &workspace_size, &executor),
              ACLNN_ERR_PARAM_NULLPTR);
    EXPECT_EQ(nnplug_op_get_workspace_size(&copy, nullptr, nullptr, &workspace_size, &executor),
              ACLNN_ERR_PARAM_INVALID);
    EXPECT_NE(message().find("not a published schema"), std::string::npos) << message();
}

}  // namespace
}  // namespace nnplug::test
