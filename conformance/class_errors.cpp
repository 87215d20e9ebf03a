// The first-phase errors of an op with a class axis, derived from its published schema and
// one valid case of its kit: each required operand null, each operand in a dtype outside its
// set, each ranked operand in a rank it may not have, each operand in a shape its rule
// refuses, each bounded attribute out of its range; then two faults at once, where the check
// the schema lists first must decide, and two wrong dtypes, where the API's own dtype order
// (nnplug_op_schema.dtype_steps) must decide. No op is named here: a new op gets its cases
// from its schema.
#include <nnplug/op_schema.h>
#include <nnplug/plugin.h>

#include <cmath>
#include <functional>
#include <limits>
#include <optional>
#include <string>

#include "kit_internal.h"

namespace nnplug::conformance {
namespace {

// One way to spoil a valid call, and what the first phase must then say.
struct Spoil {
    nnplug_check check;
    std::string name;
    int slot;  // the operand spoiled, or -1 for an attribute
    aclnnStatus status;
    std::string fragment;  // a part of the message
    std::function<void(ClassCase&)> apply;
};

int64_t element_count(const std::vector<int64_t>& shape) {
    int64_t n = 1;
    for (const int64_t d : shape) n *= d;
    return n;
}

// A tensor given a new shape, its values resized to it (zeros: class 0 for a target).
void reshape(HostTensor& t, std::vector<int64_t> shape) {
    t.values.assign(static_cast<size_t>(element_count(shape)), 0.0f);
    t.shape = std::move(shape);
}

bool in_set(aclDataType dtype, uint32_t set) {
    const int32_t abi = nnplug_dtype_of_acl(dtype);
    return abi >= 0 && (set & NNPLUG_DTYPE_BIT(abi)) != 0;
}

// PyTorch's can_cast, the rule of NNPLUG_DTYPE_CAST_FROM_SELF: never to a lower category.
int category(aclDataType dtype) {
    if (dtype == ACL_BOOL) return 0;
    if (dtype == ACL_FLOAT || dtype == ACL_FLOAT16 || dtype == ACL_BF16 || dtype == ACL_DOUBLE) return 2;
    return 1;
}

int self_slot(const nnplug_op_schema& schema) {
    for (size_t slot = 0; slot < schema.operand_count; ++slot)
        if (schema.operands[slot].shape == NNPLUG_SHAPE_ITERATION) return static_cast<int>(slot);
    return 0;
}

bool step_fails(const nnplug_op_schema& schema, const ClassCase& c, nnplug_dtype_step step) {
    const HostTensor& t = c.tensors[static_cast<size_t>(step.slot)];
    if (!t.present) return false;
    const int other = schema.operands[step.slot].dtype_of;
    switch (step.rule) {
        case NNPLUG_DTYPE_IN_SET:
            return !in_set(t.dtype, schema.operands[step.slot].dtypes);
        case NNPLUG_DTYPE_EQUALS_OTHER:
            return other >= 0 && c.tensors[static_cast<size_t>(other)].present &&
                   t.dtype != c.tensors[static_cast<size_t>(other)].dtype;
        case NNPLUG_DTYPE_CAST_FROM_SELF:
            return category(t.dtype) < category(c.tensors[static_cast<size_t>(self_slot(schema))].dtype);
    }
    return false;
}

// The dtype check the published contract says fails first: the schema's steps, then every
// operand's set in slot order, then every dtype_of. Its message fragment, or none.
std::optional<std::string> first_dtype_fault(const nnplug_op_schema& schema, const ClassCase& c) {
    std::vector<nnplug_dtype_step> steps(schema.dtype_steps, schema.dtype_steps + schema.dtype_step_count);
    for (const nnplug_dtype_rule rule : {NNPLUG_DTYPE_IN_SET, NNPLUG_DTYPE_EQUALS_OTHER})
        for (size_t slot = 0; slot < schema.operand_count; ++slot)
            steps.push_back({static_cast<int32_t>(slot), rule});
    for (const nnplug_dtype_step step : steps) {
        if (!step_fails(schema, c, step)) continue;
        const std::string name = schema.operands[step.slot].name;
        return step.rule == NNPLUG_DTYPE_CAST_FROM_SELF ? "to " + name + "'s" : name + " has dtype";
    }
    return std::nullopt;
}

// A dtype that breaks `rule` for the operand in `slot` of a float32 call.
aclDataType breaking_dtype(const nnplug_op_schema& schema, const ClassCase& c, nnplug_dtype_step step) {
    const nnplug_operand_schema& operand = schema.operands[step.slot];
    if (step.rule == NNPLUG_DTYPE_CAST_FROM_SELF) return ACL_INT32;
    if (step.rule == NNPLUG_DTYPE_EQUALS_OTHER)
        return c.tensors[static_cast<size_t>(operand.dtype_of)].dtype == ACL_FLOAT ? ACL_FLOAT16 : ACL_FLOAT;
    return (operand.dtypes & NNPLUG_DTYPE_BIT(NNPLUG_DTYPE_F32)) == 0 ? ACL_FLOAT : ACL_INT64;
}

void add_null_and_dtype_spoils(const nnplug_op_schema& schema, const ClassCase& valid,
                               std::vector<Spoil>& out) {
    for (size_t slot = 0; slot < schema.operand_count; ++slot) {
        const nnplug_operand_schema& operand = schema.operands[slot];
        const std::string name = operand.name;
        if (!operand.optional)
            out.push_back({NNPLUG_CHECK_NULL, "null_" + name, static_cast<int>(slot), ACLNN_ERR_PARAM_NULLPTR,
                           name + " is null", [slot](ClassCase& c) { c.tensors[slot].present = false; }});
        const bool any_dtype = (operand.dtypes & NNPLUG_DTYPE_BIT(NNPLUG_DTYPE_I64)) &&
                               (operand.dtypes & NNPLUG_DTYPE_BIT(NNPLUG_DTYPE_F32));
        if (!valid.tensors[slot].present || any_dtype) continue;
        const aclDataType dtype =
            breaking_dtype(schema, valid, {static_cast<int32_t>(slot), NNPLUG_DTYPE_IN_SET});
        ClassCase spoiled = valid;
        spoiled.tensors[slot].dtype = dtype;
        const auto fragment = first_dtype_fault(schema, spoiled);
        if (!fragment) continue;
        out.push_back({NNPLUG_CHECK_DTYPE, "dtype_" + name, static_cast<int>(slot), ACLNN_ERR_PARAM_INVALID,
                       *fragment, [slot, dtype](ClassCase& c) { c.tensors[slot].dtype = dtype; }});
    }
}

// A rank outside a ranked operand's set (the lowest one up to NNPLUG_MAX_DIMS).
void add_rank_spoils(const nnplug_op_schema& schema, const ClassCase& valid, std::vector<Spoil>& out) {
    for (size_t slot = 0; slot < schema.operand_count; ++slot) {
        const nnplug_operand_schema& operand = schema.operands[slot];
        if (operand.ranks == 0 || !valid.tensors[slot].present) continue;
        int rank = 0;
        while (rank <= NNPLUG_MAX_DIMS && ((operand.ranks >> rank) & 1u)) ++rank;
        if (rank > NNPLUG_MAX_DIMS) continue;
        out.push_back({NNPLUG_CHECK_RANK, "rank_" + std::to_string(rank) + "_" + operand.name,
                       static_cast<int>(slot), ACLNN_ERR_PARAM_INVALID,
                       std::string(operand.name) + " has " + std::to_string(rank) + " dimension",
                       [slot, rank](ClassCase& c) {
                           reshape(c.tensors[slot], std::vector<int64_t>(static_cast<size_t>(rank), 1));
                       }});
    }
}

// A shape each operand's rule refuses, in a reducing call: a row count one too many, one class
// too many, two elements where one is due.
void add_shape_spoils(const nnplug_op_schema& schema, const ClassCase& valid, std::vector<Spoil>& out) {
    for (size_t slot = 0; slot < schema.operand_count; ++slot) {
        const nnplug_operand_schema& operand = schema.operands[slot];
        const HostTensor& t = valid.tensors[slot];
        if (!t.present) continue;
        std::vector<int64_t> shape = t.shape;
        switch (operand.shape) {
            case NNPLUG_SHAPE_CLASS_ROWS:
            case NNPLUG_SHAPE_EQUALS_ITERATION:
            case NNPLUG_SHAPE_EQUALS_ITERATION_EVEN_EMPTY:
            case NNPLUG_SHAPE_CLASSES:
                if (shape.empty()) continue;
                shape[0] += 1;
                break;
            case NNPLUG_SHAPE_CLASS_ROWS_OR_REDUCED:
            case NNPLUG_SHAPE_ONE_ELEMENT:
                shape = {2};
                break;
            default:
                continue;
        }
        out.push_back({NNPLUG_CHECK_SHAPE, "shape_" + std::string(operand.name), static_cast<int>(slot),
                       ACLNN_ERR_PARAM_INVALID, std::string(operand.name) + " shape",
                       [slot, shape](ClassCase& c) { reshape(c.tensors[slot], shape); }});
    }
}

void add_attr_spoils(const nnplug_op_schema& schema, std::vector<Spoil>& out) {
    for (size_t a = 0; a < schema.attr_count; ++a) {
        const nnplug_attr_schema& attr = schema.attrs[a];
        std::vector<std::pair<std::string, AttrArg>> values;
        if (attr.type == NNPLUG_ATTR_ARG_REDUCTION_WORD)
            values.emplace_back("avg", AttrArg::reduction("avg"));
        if (attr.type == NNPLUG_ATTR_ARG_INT64 && attr.range != nullptr) {
            if (attr.max < std::numeric_limits<int64_t>::max()) values.emplace_back("above", attr.max + 1);
            if (attr.min > std::numeric_limits<int64_t>::min()) values.emplace_back("below", attr.min - 1);
        }
        const bool real = attr.type == NNPLUG_ATTR_ARG_DOUBLE || attr.type == NNPLUG_ATTR_ARG_FLOAT;
        if (real && attr.range != nullptr) {
            const auto arg = [&attr](double v) {
                return attr.type == NNPLUG_ATTR_ARG_FLOAT ? AttrArg::float32(static_cast<float>(v))
                                                          : AttrArg::real(v);
            };
            values.emplace_back("nan", arg(std::nan("")));
            if (std::isfinite(attr.min_real)) values.emplace_back("below", arg(attr.min_real - 1.0));
            if (std::isfinite(attr.max_real)) values.emplace_back("above", arg(attr.max_real + 1.0));
        }
        for (const auto& [word, value] : values)
            out.push_back({NNPLUG_CHECK_ATTRS, std::string(attr.name) + "_" + word, -1, schema.attr_status,
                           std::string(attr.name) + " ",
                           [a, value = value](ClassCase& c) { c.attrs.at(a) = value; }});
    }
}

int position(const nnplug_op_schema& schema, nnplug_check check) {
    for (size_t k = 0; k < schema.check_count; ++k)
        if (schema.checks[k] == check) return static_cast<int>(k);
    return -1;
}

ClassErrorCase make_case(const ClassCase& valid, const std::string& name, const Spoil& decides,
                         const std::vector<const Spoil*>& spoils) {
    ClassErrorCase error{valid, decides.status, decides.fragment};
    error.c.name = name;
    for (const Spoil* spoil : spoils) spoil->apply(error.c);
    error.c.expected.assign(error.c.tensors.size(), {});
    return error;
}

// Two faults of different checks on different operands: the check listed first decides.
void add_order_cases(const nnplug_op_schema& schema, const ClassCase& valid, const std::vector<Spoil>& spoils,
                     std::vector<ClassErrorCase>& out) {
    std::vector<const Spoil*> first_of_check;
    for (const Spoil& spoil : spoils) {
        bool seen = false;
        for (const Spoil* s : first_of_check) seen = seen || s->check == spoil.check;
        if (!seen && position(schema, spoil.check) >= 0) first_of_check.push_back(&spoil);
    }
    for (const Spoil* a : first_of_check)
        for (const Spoil* b : first_of_check) {
            if (position(schema, a->check) >= position(schema, b->check) ||
                (a->slot >= 0 && a->slot == b->slot))
                continue;
            out.push_back(make_case(valid, "order_" + a->name + "_before_" + b->name, *a, {a, b}));
        }
}

// Two wrong dtypes, each breaking its own step: the fault the API's order meets first decides.
void add_dtype_order_cases(const nnplug_op_schema& schema, const ClassCase& valid,
                           std::vector<ClassErrorCase>& out) {
    for (size_t i = 0; i < schema.dtype_step_count; ++i)
        for (size_t j = i + 1; j < schema.dtype_step_count; ++j) {
            const nnplug_dtype_step a = schema.dtype_steps[i], b = schema.dtype_steps[j];
            if (a.slot == b.slot || !valid.tensors[a.slot].present || !valid.tensors[b.slot].present)
                continue;
            ClassCase spoiled = valid;
            spoiled.tensors[b.slot].dtype = breaking_dtype(schema, valid, b);
            spoiled.tensors[a.slot].dtype = breaking_dtype(schema, spoiled, a);
            const auto fragment = first_dtype_fault(schema, spoiled);
            if (!fragment) continue;
            spoiled.name = std::string("dtype_order_") + schema.operands[a.slot].name + "_" +
                           schema.operands[b.slot].name;
            spoiled.expected.assign(spoiled.tensors.size(), {});
            out.push_back({spoiled, ACLNN_ERR_PARAM_INVALID, *fragment});
        }
}

}  // namespace

std::vector<ClassErrorCase> class_error_cases(const nnplug_op_schema& schema, const ClassCase& valid) {
    std::vector<Spoil> spoils;
    add_null_and_dtype_spoils(schema, valid, spoils);
    add_rank_spoils(schema, valid, spoils);
    add_shape_spoils(schema, valid, spoils);
    add_attr_spoils(schema, spoils);
    std::vector<ClassErrorCase> cases;
    for (const Spoil& spoil : spoils) cases.push_back(make_case(valid, spoil.name, spoil, {&spoil}));
    add_order_cases(schema, valid, spoils, cases);
    add_dtype_order_cases(schema, valid, cases);
    return cases;
}

}  // namespace nnplug::conformance
