// cpu_tbb's op tables against the schemas libnnplug publishes (nnplug/op_schema.h): every
// published op has kernels, the kernels read only the schema's inputs (an input the math
// does not depend on may go unread) and write its output, and round to the promoted dtype
// exactly the inputs the schema rounds. An op a
// table misses, or a rule it states otherwise, fails here rather than in a user's run. An op
// with a class axis runs in the shared row model instead (common/class_ops.h), which must know it.
#include <gtest/gtest.h>
#include <nnplug/op_schema.h>

#include <cstdint>
#include <set>

#include "class_ops.h"
#include "vector_run.h"

namespace nnplug::cpu {
namespace {

std::vector<OpKernels> registered_kernels() {
    std::vector<OpKernels> all;
#define NNPLUG_OP_SOURCE(stem) register_##stem(all);
#include "cpu_tbb_op_sources.inc"
#undef NNPLUG_OP_SOURCE
    return all;
}

TEST(CpuTbbOpTables, AgreeWithThePublishedSchemas) {
    const std::vector<OpKernels> registered = registered_kernels();
    size_t elementwise = 0;
    for (size_t i = 0; i < nnplug_op_schema_count(); ++i) {
        const nnplug_op_schema& schema = *nnplug_op_schema_at(i);
        SCOPED_TRACE(schema.api);
        if (schema.class_axis != NNPLUG_CLASS_AXIS_NONE) {
            EXPECT_TRUE(common::is_class_op(schema.kind)) << "the row model does not know this op";
            continue;
        }
        ++elementwise;
        const OpKernels* kernels = nullptr;
        for (const OpKernels& each : registered)
            if (each.op == schema.kind) kernels = &each;
        ASSERT_NE(kernels, nullptr) << "cpu_tbb has no kernels for this op";
        const OpOperands& operands = kernels->kernels().operands;
        std::set<int> inputs;
        uint32_t read = 0;
        for (int k = 0; k < operands.input_count; ++k) {
            const int slot = operands.inputs[k].slot;
            read |= slot_bit(slot);
            ASSERT_TRUE(slot >= 0 && static_cast<size_t>(slot) < schema.operand_count) << slot;
            EXPECT_FALSE(schema.operands[slot].output) << schema.operands[slot].name << " read as an input";
            EXPECT_TRUE(inputs.insert(slot).second) << schema.operands[slot].name << " read twice";
        }
        for (size_t slot = 0; slot < schema.operand_count; ++slot) {
            const nnplug_operand_schema& operand = schema.operands[slot];
            const int s = static_cast<int>(slot);
            if (operand.output) {
                EXPECT_EQ(operands.out, s) << operand.name;
            } else if (inputs.count(s) == 1) {
                EXPECT_EQ((operands.rounded_to_promoted & slot_bit(s)) != 0, operand.rounded_to_promoted != 0)
                    << operand.name;
            }
        }
        EXPECT_EQ(operands.rounded_to_promoted & ~read, 0u) << "rounds an input it does not read";
    }
    EXPECT_EQ(registered.size(), elementwise);
}

}  // namespace
}  // namespace nnplug::cpu
