// The op schemas libnnplug publishes (nnplug/op_schema.h): one per op kind the SDK knows,
// named as the SDK names it, within the ABI's limits, and read the same from C as from C++.
#include <fmt/format.h>
#include <gtest/gtest.h>
#include <nnplug/op_schema.h>
#include <nnplug/plugin.h>

#include <set>
#include <string>
#include <vector>

extern "C" size_t nnplug_test_schema_text_from_c(char* text, size_t size);

namespace {

const nnplug_op_schema& schema_of(nnplug_op_kind kind) {
    for (size_t i = 0; i < nnplug_op_schema_count(); ++i)
        if (nnplug_op_schema_at(i)->kind == kind) return *nnplug_op_schema_at(i);
    throw std::runtime_error(fmt::format("no schema for op kind {}", static_cast<int>(kind)));
}

const nnplug_operand_schema& operand(const nnplug_op_schema& op, int slot) {
    EXPECT_LT(static_cast<size_t>(slot), op.operand_count);
    return op.operands[slot];
}

TEST(OpSchema, EveryKindTheSdkKnowsHasExactlyOneSchemaInKindOrder) {
    ASSERT_EQ(nnplug_op_schema_count(), static_cast<size_t>(NNPLUG_OP_KIND_COUNT));
    for (size_t i = 0; i < nnplug_op_schema_count(); ++i) {
        const nnplug_op_schema* op = nnplug_op_schema_at(i);
        ASSERT_NE(op, nullptr);
        EXPECT_EQ(static_cast<size_t>(op->kind), i) << op->api;
        ASSERT_NE(nnplug_op_api_name(op->kind), nullptr);
        EXPECT_STREQ(op->api, nnplug_op_api_name(op->kind));
    }
    EXPECT_EQ(nnplug_op_schema_at(nnplug_op_schema_count()), nullptr);
    EXPECT_EQ(nnplug_op_schema_at(static_cast<size_t>(-1)), nullptr);
}

// What every op's schema must be for the planner and the ABI to take it.
void expect_well_formed(const nnplug_op_schema& op) {
    SCOPED_TRACE(op.api);
    ASSERT_GE(op.operand_count, 2u);
    ASSERT_LE(op.operand_count, static_cast<size_t>(NNPLUG_MAX_OPERANDS));
    int selves = 0, outputs = 0;
    std::set<std::string> names;
    for (size_t slot = 0; slot < op.operand_count; ++slot) {
        const nnplug_operand_schema& o = op.operands[slot];
        ASSERT_NE(o.name, nullptr);
        EXPECT_TRUE(names.insert(o.name).second) << o.name << " named twice";
        selves += o.shape == NNPLUG_SHAPE_ITERATION;
        outputs += o.output != 0;
        EXPECT_LE(static_cast<int>(o.shape), NNPLUG_SHAPE_IGNORED) << o.name;
        // The class rules belong to ops with a class axis, and only to them.
        const bool class_rule = o.shape >= NNPLUG_SHAPE_CLASS_ROWS && o.shape <= NNPLUG_SHAPE_ONE_ELEMENT;
        if (class_rule) {
            EXPECT_NE(op.class_axis, NNPLUG_CLASS_AXIS_NONE) << o.name;
        }
        EXPECT_NE(o.dtypes, 0u) << o.name << " may have no dtype";
        EXPECT_TRUE(o.dtype_of == -1 ||
                    (o.dtype_of >= 0 && static_cast<size_t>(o.dtype_of) < op.operand_count &&
                     static_cast<size_t>(o.dtype_of) != slot))
            << o.name << " dtype_of " << o.dtype_of;
        if (o.output) {
            EXPECT_FALSE(o.promotes) << o.name;
            EXPECT_FALSE(o.rounded_to_promoted) << o.name;
        }
        // Only an input outside the promotion is rounded to its result.
        if (o.rounded_to_promoted) {
            EXPECT_FALSE(o.promotes) << o.name;
        }
    }
    EXPECT_EQ(selves, 1);
    EXPECT_GE(outputs, 1);
    EXPECT_TRUE(op.promise == NNPLUG_PROMISE_TOLERANCE || op.promise == NNPLUG_PROMISE_CANONICAL_BITS ||
                op.promise == NNPLUG_PROMISE_CANONICAL_ORDER)
        << op.promise;
    ASSERT_GE(op.check_count, 1u);
    EXPECT_EQ(op.checks[0], NNPLUG_CHECK_NULL);
    std::set<int> checks;
    for (size_t c = 0; c < op.check_count; ++c) {
        EXPECT_LE(static_cast<int>(op.checks[c]), NNPLUG_CHECK_PROMOTION);
        EXPECT_TRUE(checks.insert(op.checks[c]).second) << "check " << op.checks[c] << " listed twice";
    }
    for (size_t a = 0; a < op.attr_count; ++a) {
        ASSERT_NE(op.attrs[a].name, nullptr);
        if (op.attrs[a].type == NNPLUG_ATTR_ARG_INT64) {
            ASSERT_NE(op.attrs[a].range, nullptr);
            EXPECT_LE(op.attrs[a].min, op.attrs[a].max) << op.attrs[a].name;
        }
        if (op.attrs[a].type == NNPLUG_ATTR_ARG_DOUBLE && op.attrs[a].range != nullptr) {
            EXPECT_LE(op.attrs[a].min_real, op.attrs[a].max_real) << op.attrs[a].name;
        }
    }
    // A dtype step names a slot, and an equality step an operand that has a dtype_of.
    for (size_t k = 0; k < op.dtype_step_count; ++k) {
        const nnplug_dtype_step& step = op.dtype_steps[k];
        ASSERT_TRUE(step.slot >= 0 && static_cast<size_t>(step.slot) < op.operand_count) << step.slot;
        EXPECT_LE(static_cast<int>(step.rule), NNPLUG_DTYPE_CAST_FROM_SELF);
        if (step.rule == NNPLUG_DTYPE_EQUALS_OTHER) {
            EXPECT_GE(op.operands[step.slot].dtype_of, 0) << op.operands[step.slot].name;
        }
    }
    EXPECT_TRUE(op.attr_status == ACLNN_ERR_PARAM_INVALID || op.attr_status == ACLNN_ERR_INNER_TILING_ERROR)
        << op.attr_status;
    // A mean over the data's weights is the kernel's: only a class-axis op can have one.
    if (op.mean_count == NNPLUG_MEAN_OVER_WEIGHTS) {
        EXPECT_NE(op.class_axis, NNPLUG_CLASS_AXIS_NONE);
    }
}

TEST(OpSchema, EverySchemaIsWellFormed) {
    for (size_t i = 0; i < nnplug_op_schema_count(); ++i) expect_well_formed(*nnplug_op_schema_at(i));
}

// Columns a wrong C view would swap or drop, on ops whose documented rules tell them apart
// (docs/ops/*.md).
TEST(OpSchema, PublishesTheDocumentedRules) {
    const nnplug_op_schema& mse = schema_of(NNPLUG_OP_MSE_LOSS);
    EXPECT_EQ(operand(mse, NNPLUG_MSE_LOSS_TARGET).shape, NNPLUG_SHAPE_BROADCASTS_MUTUALLY);
    EXPECT_EQ(operand(mse, NNPLUG_MSE_LOSS_OUT).shape, NNPLUG_SHAPE_ITERATION_OR_REDUCED);
    EXPECT_EQ(mse.reduced_shape, NNPLUG_REDUCED_SCALAR);
    EXPECT_TRUE(mse.empty_reduction_written);
    const std::vector<nnplug_check> mse_order = {NNPLUG_CHECK_NULL,      NNPLUG_CHECK_DTYPE,
                                                 NNPLUG_CHECK_PROMOTION, NNPLUG_CHECK_RANK,
                                                 NNPLUG_CHECK_ATTRS,     NNPLUG_CHECK_SHAPE};
    EXPECT_EQ(std::vector<nnplug_check>(mse.checks, mse.checks + mse.check_count), mse_order);
    ASSERT_EQ(mse.attr_count, 1u);
    EXPECT_STREQ(mse.attrs[0].name, "reduction");
    EXPECT_EQ(mse.attrs[0].key, NNPLUG_ATTR_REDUCTION);
    EXPECT_EQ(mse.attrs[0].min, NNPLUG_REDUCTION_NONE);
    EXPECT_EQ(mse.attrs[0].max, NNPLUG_REDUCTION_SUM);

    const nnplug_op_schema& mse_backward = schema_of(NNPLUG_OP_MSE_LOSS_BACKWARD);
    EXPECT_EQ(mse_backward.mean_count, NNPLUG_MEAN_OVER_SELF);
    EXPECT_FALSE(mse_backward.empty_reduction_written);
    EXPECT_EQ(operand(mse_backward, NNPLUG_MSE_LOSS_BACKWARD_GRAD_OUTPUT).dtype_of,
              NNPLUG_MSE_LOSS_BACKWARD_SELF);
    EXPECT_EQ(operand(mse_backward, NNPLUG_MSE_LOSS_BACKWARD_SELF).dtype_of, -1);
    // The gradients without exp or log promise their canonical bits; the losses a tolerance.
    EXPECT_EQ(mse_backward.promise, NNPLUG_PROMISE_CANONICAL_BITS);
    EXPECT_EQ(mse.promise, NNPLUG_PROMISE_TOLERANCE);
    EXPECT_EQ(schema_of(NNPLUG_OP_BINARY_CROSS_ENTROPY_BACKWARD).promise, NNPLUG_PROMISE_CANONICAL_BITS);
    // The with-logits ops fix every operation but their exp and log.
    for (const nnplug_op_kind kind :
         {NNPLUG_OP_BINARY_CROSS_ENTROPY_WITH_LOGITS, NNPLUG_OP_BINARY_CROSS_ENTROPY_WITH_LOGITS_BACKWARD,
          NNPLUG_OP_BINARY_CROSS_ENTROPY_WITH_LOGITS_TARGET_BACKWARD})
        EXPECT_EQ(schema_of(kind).promise, NNPLUG_PROMISE_CANONICAL_ORDER) << kind;

    const nnplug_op_schema& bce = schema_of(NNPLUG_OP_BINARY_CROSS_ENTROPY);
    EXPECT_EQ(bce.reduced_shape, NNPLUG_REDUCED_SCALAR_OR_ONE);
    EXPECT_EQ(bce.mean_count, NNPLUG_MEAN_OVER_ITERATION);
    const nnplug_operand_schema& weight = operand(bce, NNPLUG_BINARY_CROSS_ENTROPY_WEIGHT);
    EXPECT_STREQ(weight.name, "weight");
    EXPECT_TRUE(weight.optional && weight.same_format && weight.promotes && !weight.output);
    EXPECT_EQ(weight.shape, NNPLUG_SHAPE_BROADCASTS_TO);

    // The with-logits loss: self promotes but has no format rule; weights do not promote.
    const nnplug_op_schema& logits = schema_of(NNPLUG_OP_BINARY_CROSS_ENTROPY_WITH_LOGITS);
    EXPECT_TRUE(operand(logits, NNPLUG_BINARY_CROSS_ENTROPY_WITH_LOGITS_SELF).promotes);
    EXPECT_FALSE(operand(logits, NNPLUG_BINARY_CROSS_ENTROPY_WITH_LOGITS_SELF).same_format);
    EXPECT_FALSE(operand(logits, NNPLUG_BINARY_CROSS_ENTROPY_WITH_LOGITS_POS_WEIGHT).promotes);
    // ... and are rounded to the promoted dtype of self and target; in the gradients they promote.
    EXPECT_TRUE(operand(logits, NNPLUG_BINARY_CROSS_ENTROPY_WITH_LOGITS_WEIGHT).rounded_to_promoted);
    EXPECT_TRUE(operand(logits, NNPLUG_BINARY_CROSS_ENTROPY_WITH_LOGITS_POS_WEIGHT).rounded_to_promoted);
    EXPECT_FALSE(operand(logits, NNPLUG_BINARY_CROSS_ENTROPY_WITH_LOGITS_SELF).rounded_to_promoted);
    EXPECT_FALSE(operand(schema_of(NNPLUG_OP_BINARY_CROSS_ENTROPY_WITH_LOGITS_BACKWARD),
                         NNPLUG_BINARY_CROSS_ENTROPY_WITH_LOGITS_BACKWARD_WEIGHT)
                     .rounded_to_promoted);
    EXPECT_EQ(operand(logits, NNPLUG_BINARY_CROSS_ENTROPY_WITH_LOGITS_TARGET).shape,
              NNPLUG_SHAPE_EQUALS_ITERATION_EVEN_EMPTY);
    EXPECT_STREQ(operand(schema_of(NNPLUG_OP_BINARY_CROSS_ENTROPY_WITH_LOGITS_TARGET_BACKWARD),
                         NNPLUG_BINARY_CROSS_ENTROPY_WITH_LOGITS_BACKWARD_OUT)
                     .name,
                 "gradTarget");
}

// Each gradient names the loss it is the gradient of: a loss with a reduction, itself no
// gradient; the kit checks the pair against finite differences.
TEST(OpSchema, GradientsNameTheirLoss) {
    const std::pair<nnplug_op_kind, nnplug_op_kind> links[] = {
        {NNPLUG_OP_BINARY_CROSS_ENTROPY_BACKWARD, NNPLUG_OP_BINARY_CROSS_ENTROPY},
        {NNPLUG_OP_BINARY_CROSS_ENTROPY_WITH_LOGITS_BACKWARD, NNPLUG_OP_BINARY_CROSS_ENTROPY_WITH_LOGITS},
        {NNPLUG_OP_MSE_LOSS_BACKWARD, NNPLUG_OP_MSE_LOSS},
        {NNPLUG_OP_NLL_LOSS_BACKWARD, NNPLUG_OP_NLL_LOSS},
        {NNPLUG_OP_NLL_LOSS_2D_BACKWARD, NNPLUG_OP_NLL_LOSS_2D},
        {NNPLUG_OP_CROSS_ENTROPY_LOSS_GRAD, NNPLUG_OP_CROSS_ENTROPY_LOSS}};
    for (const auto& [gradient, loss] : links) EXPECT_EQ(schema_of(gradient).gradient_of, loss) << gradient;
    EXPECT_EQ(schema_of(NNPLUG_OP_BINARY_CROSS_ENTROPY_WITH_LOGITS_TARGET_BACKWARD).gradient_of,
              -1);  // w.r.t. target
    for (size_t i = 0; i < nnplug_op_schema_count(); ++i) {
        const nnplug_op_schema& op = *nnplug_op_schema_at(i);
        if (op.gradient_of < 0) continue;
        const nnplug_op_schema& loss = schema_of(static_cast<nnplug_op_kind>(op.gradient_of));
        EXPECT_EQ(loss.gradient_of, -1) << op.api;
        EXPECT_EQ(loss.class_axis, op.class_axis) << op.api;
    }
}

// The class-axis ops' columns (docs/ops/nll_loss.md, docs/ops/cross_entropy_loss.md).
TEST(OpSchema, PublishesTheClassAxisRules) {
    const uint32_t integer_targets = NNPLUG_DTYPE_BIT(NNPLUG_DTYPE_I64) | NNPLUG_DTYPE_BIT(NNPLUG_DTYPE_I32) |
                                     NNPLUG_DTYPE_BIT(NNPLUG_DTYPE_U8);
    const nnplug_op_schema& nll = schema_of(NNPLUG_OP_NLL_LOSS);
    EXPECT_EQ(nll.class_axis, NNPLUG_CLASS_AXIS_SECOND_OR_ONLY);
    EXPECT_EQ(nll.mean_count, NNPLUG_MEAN_OVER_WEIGHTS);
    EXPECT_EQ(operand(nll, NNPLUG_NLL_LOSS_SELF).ranks, (1u << 1) | (1u << 2));
    EXPECT_EQ(operand(nll, NNPLUG_NLL_LOSS_TARGET).shape, NNPLUG_SHAPE_CLASS_ROWS);
    EXPECT_EQ(operand(nll, NNPLUG_NLL_LOSS_TARGET).dtypes, integer_targets);
    EXPECT_EQ(operand(nll, NNPLUG_NLL_LOSS_WEIGHT).shape, NNPLUG_SHAPE_CLASSES);
    EXPECT_FALSE(operand(nll, NNPLUG_NLL_LOSS_WEIGHT).optional);  // CANN requires it
    EXPECT_EQ(operand(nll, NNPLUG_NLL_LOSS_WEIGHT).dtype_of, NNPLUG_NLL_LOSS_SELF);
    EXPECT_EQ(operand(nll, NNPLUG_NLL_LOSS_TOTAL_WEIGHT).shape, NNPLUG_SHAPE_ONE_ELEMENT);
    EXPECT_EQ(operand(nll, NNPLUG_NLL_LOSS_TOTAL_WEIGHT).empty_value, NNPLUG_EMPTY_ZERO);
    EXPECT_EQ(operand(schema_of(NNPLUG_OP_NLL_LOSS_2D), NNPLUG_NLL_LOSS_SELF).ranks, 1u << 4);
    // NLLLoss2dBackward checks shapes before the reduction, and wants out in self's dtype.
    const nnplug_op_schema& back2d = schema_of(NNPLUG_OP_NLL_LOSS_2D_BACKWARD);
    EXPECT_EQ(back2d.checks[back2d.check_count - 1], NNPLUG_CHECK_ATTRS);
    EXPECT_EQ(operand(back2d, NNPLUG_NLL_LOSS_BACKWARD_OUT).dtype_of, NNPLUG_NLL_LOSS_BACKWARD_SELF);
    EXPECT_EQ(operand(schema_of(NNPLUG_OP_NLL_LOSS_BACKWARD), NNPLUG_NLL_LOSS_BACKWARD_OUT).dtype_of, -1);

    const nnplug_op_schema& ce = schema_of(NNPLUG_OP_CROSS_ENTROPY_LOSS);
    ASSERT_EQ(ce.attr_count, 5u);
    EXPECT_EQ(ce.attrs[0].type, NNPLUG_ATTR_ARG_REDUCTION_WORD);
    EXPECT_EQ(ce.attrs[1].type, NNPLUG_ATTR_ARG_INT64);
    EXPECT_TRUE(ce.attrs[1].negative_ignores_nothing);
    EXPECT_EQ(ce.attrs[2].type, NNPLUG_ATTR_ARG_DOUBLE);
    EXPECT_EQ(ce.attrs[2].max_real, 1.0);
    EXPECT_EQ(ce.attrs[4].type, NNPLUG_ATTR_ARG_BOOL);
    EXPECT_EQ(operand(ce, NNPLUG_CROSS_ENTROPY_LOSS_WEIGHT).dtypes, NNPLUG_DTYPE_BIT(NNPLUG_DTYPE_F32));
    EXPECT_TRUE(operand(ce, NNPLUG_CROSS_ENTROPY_LOSS_WEIGHT).optional);
    EXPECT_EQ(operand(ce, NNPLUG_CROSS_ENTROPY_LOSS_ZLOSS).shape, NNPLUG_SHAPE_IGNORED);
    EXPECT_FALSE(operand(ce, NNPLUG_CROSS_ENTROPY_LOSS_ZLOSS).optional);  // CANN requires it
    EXPECT_EQ(operand(ce, NNPLUG_CROSS_ENTROPY_LOSS_LOG_PROB).dtype_of, NNPLUG_CROSS_ENTROPY_LOSS_INPUT);
    EXPECT_EQ(
        operand(schema_of(NNPLUG_OP_CROSS_ENTROPY_LOSS_GRAD), NNPLUG_CROSS_ENTROPY_LOSS_GRAD_GRAD_LOSS).shape,
        NNPLUG_SHAPE_CLASS_ROWS_OR_REDUCED);
}

// The same line per op as op_schema_from_c.c writes, from C++.
std::string schema_text_from_cpp() {
    std::string text;
    for (size_t i = 0; i < nnplug_op_schema_count(); ++i) {
        const nnplug_op_schema& op = *nnplug_op_schema_at(i);
        text += fmt::format("{} {}:", op.api, static_cast<int>(op.kind));
        for (size_t s = 0; s < op.operand_count; ++s) {
            const nnplug_operand_schema& o = op.operands[s];
            text += fmt::format(
                " {}/{}d{}r{}", o.name,
                o.output * 10000 + o.optional * 1000 + o.shape * 100 + o.same_format * 10 + o.promotes,
                o.dtype_of, o.rounded_to_promoted);
            text += fmt::format("t{}k{}e{}", o.dtypes, o.ranks, static_cast<int>(o.empty_value));
        }
        for (size_t a = 0; a < op.attr_count; ++a)
            text += fmt::format(
                " | {}[{},{}]:{}/{}", op.attrs[a].name, op.attrs[a].min, op.attrs[a].max,
                static_cast<int>(op.attrs[a].type),
                static_cast<long long>(op.attrs[a].max_real * 1000) + op.attrs[a].negative_ignores_nothing);
        text += " | checks";
        for (size_t c = 0; c < op.check_count; ++c)
            text += fmt::format(" {}", static_cast<int>(op.checks[c]));
        text += fmt::format(" {}\n", op.promise * 10000 + op.empty_reduction_written * 1000 +
                                         op.reduced_shape * 100 + op.mean_count * 10 + op.has_extra_check);
        text += fmt::format("axis {} gradient of {}\n", static_cast<int>(op.class_axis), op.gradient_of);
    }
    return text;
}

TEST(OpSchema, ACProgramReadsWhatCppReads) {
    std::vector<char> buffer(1 << 16);
    const size_t length = nnplug_test_schema_text_from_c(buffer.data(), buffer.size());
    ASSERT_LT(length, buffer.size());
    const std::string from_c(buffer.data(), length);
    EXPECT_EQ(from_c, schema_text_from_cpp());
    EXPECT_NE(from_c.find("aclnnMseLoss 5: self/1d-1r0t7k0e0 target/401d-1r0t7k0e0 out/10500d-1r0t7k0e0 | "
                          "reduction[0,2]:0/0 | checks 0 2 6 1 5 4 1100\naxis 0 gradient of -1\n"),
              std::string::npos)
        << from_c;
    EXPECT_NE(from_c.find(" weightOptional/1300d-1r1t7k0e0 posWeightOptional/1300d-1r1t7k0e0 "),
              std::string::npos)
        << from_c;
    EXPECT_NE(from_c.find("checks 0 2 5 1 4 10010\n"), std::string::npos) << from_c;
}

}  // namespace
