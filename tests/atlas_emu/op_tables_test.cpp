// atlas_emu's op table against the schemas libnnplug publishes (nnplug/op_schema.h): every
// published op has a tile compute, once, and the inputs its Unified Buffer rounds to the
// promoted dtype are exactly those the schema rounds. An op the table misses, or a rounding
// it states otherwise, fails here rather than in a user's 16-bit run. An op with a class axis
// runs in the shared row model instead (common/class_ops.h), which must know it.
#include <gtest/gtest.h>
#include <nnplug/op_schema.h>

#include <cstdint>
#include <vector>

#include "class_ops.h"
#include "elementwise_op.h"

namespace nnplug::emu {
namespace {

std::vector<ElementwiseOp> registered_ops() {
    std::vector<ElementwiseOp> all;
#define NNPLUG_OP_SOURCE(stem) register_##stem(all);
#include "atlas_emu_op_sources.inc"
#undef NNPLUG_OP_SOURCE
    return all;
}

TEST(AtlasEmuOpTable, AgreesWithThePublishedSchemas) {
    const std::vector<ElementwiseOp> registered = registered_ops();
    size_t elementwise = 0;
    for (size_t i = 0; i < nnplug_op_schema_count(); ++i) {
        const nnplug_op_schema& schema = *nnplug_op_schema_at(i);
        SCOPED_TRACE(schema.api);
        if (schema.class_axis != NNPLUG_CLASS_AXIS_NONE) {
            EXPECT_TRUE(common::is_class_op(schema.kind)) << "the row model does not know this op";
            continue;
        }
        ++elementwise;
        const ElementwiseOp* op = nullptr;
        for (const ElementwiseOp& each : registered)
            if (each.kind == schema.kind) {
                EXPECT_EQ(op, nullptr) << "atlas_emu registers this op twice";
                op = &each;
            }
        ASSERT_NE(op, nullptr) << "atlas_emu has no tile compute for this op";
        EXPECT_NE(op->compute, nullptr);
        uint32_t rounded = 0;
        for (size_t slot = 0; slot < schema.operand_count; ++slot)
            if (schema.operands[slot].rounded_to_promoted != 0) rounded |= 1u << slot;
        EXPECT_EQ(op->rounded_to_promoted, rounded)
            << "bits per operand slot: atlas_emu's, then the schema's";
    }
    EXPECT_EQ(registered.size(), elementwise);
}

}  // namespace
}  // namespace nnplug::emu
