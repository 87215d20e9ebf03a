// `nnplug info`: the config in effect, the plugin search path, every plugin found there (or
// refused, with the reason) and the backend each op's calls go to; with --ops, every op's
// rules as libnnplug publishes them (nnplug/op_schema.h).
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nnplug/inventory.h>
#include <nnplug/op_schema.h>
#include <nnplug/plugin.h>

#include <memory>
#include <string>
#include <vector>

#include "command.h"

namespace nnplug::cli {
namespace {

int print_inventory(const std::string& config) {
    const Inventory inventory = take_inventory(config.empty() ? nullptr : config.c_str());
    fmt::print("config:      {}\n", inventory.config_file);
    if (!inventory.config_error.empty())
        fmt::print("             cannot be used: {}\n", inventory.config_error);
    fmt::print("backend:     {}\nfallback:    {}\n", inventory.backend, inventory.fallback);
    fmt::print("search path:\n");
    for (size_t i = 0; i < inventory.search_path.size(); ++i)
        fmt::print("  {}. {}\n", i + 1, inventory.search_path[i]);
    fmt::print("plugins:\n");
    size_t usable = 0;
    for (const PluginReport& plugin : inventory.plugins) {
        if (plugin.refused.empty()) {
            ++usable;
            fmt::print("  {:<12} {}\n", plugin.name, plugin.path);
            fmt::print("  {:<12} {}\n", "", plugin.description);
            fmt::print("  {:<12} ABI {}, SoC {}, {} device(s), {} memory, dtypes {}\n", "",
                       plugin.abi_version, plugin.soc, plugin.device_count, plugin.memory,
                       fmt::join(plugin.dtypes, " "));
            fmt::print("  {:<12} ops {}\n", "", fmt::join(plugin.ops, " "));
        } else {
            fmt::print("  {:<12} {}\n  {:<12} {}\n",
                       plugin.name.empty() ? "(refused)" : plugin.name + " (refused)", plugin.path, "",
                       plugin.refused);
        }
    }
    if (inventory.plugins.empty()) fmt::print("  none found\n");
    fmt::print("ops:\n");
    for (const OpRouteReport& route : inventory.routes) {
        fmt::print("  {:<48} -> {}\n", route.op, route.backend);
        if (!route.note.empty()) fmt::print("  {:<48}    {}\n", "", route.note);
    }
    fmt::print("{} plugin(s) usable, {} refused\n", usable, inventory.plugins.size() - usable);
    return inventory.config_error.empty() ? 0 : 1;
}

const char* shape_text(nnplug_shape_rule rule, nnplug_reduced_shape reduced) {
    switch (rule) {
        case NNPLUG_SHAPE_ITERATION:
            return "defines the iteration space";
        case NNPLUG_SHAPE_EQUALS_ITERATION:
            return "the iteration space's shape";
        case NNPLUG_SHAPE_EQUALS_ITERATION_EVEN_EMPTY:
            return "the iteration space's shape, checked even when empty";
        case NNPLUG_SHAPE_BROADCASTS_TO:
            return "broadcasts to self's shape";
        case NNPLUG_SHAPE_BROADCASTS_MUTUALLY:
            return "broadcasts with self to a common shape";
        case NNPLUG_SHAPE_ITERATION_OR_REDUCED:
            return reduced == NNPLUG_REDUCED_SCALAR
                       ? "the iteration space's shape, or [] when reduced"
                       : "the iteration space's shape, or [] or [1] when reduced";
        case NNPLUG_SHAPE_CLASS_ROWS:
            return "self's shape without the class axis";
        case NNPLUG_SHAPE_CLASS_ROWS_OR_REDUCED:
            return reduced == NNPLUG_REDUCED_SCALAR
                       ? "self's shape without the class axis, or [] when reduced"
                       : "self's shape without the class axis, or [] or [1] when reduced";
        case NNPLUG_SHAPE_CLASSES:
            return "(C), one element per class";
        case NNPLUG_SHAPE_ONE_ELEMENT:
            return "[] or [1]";
        case NNPLUG_SHAPE_IGNORED:
            return "not read or written (null and dtype checked only)";
    }
    return "?";
}

const char* check_text(nnplug_check check) {
    switch (check) {
        case NNPLUG_CHECK_NULL:
            return "null";
        case NNPLUG_CHECK_RANK:
            return "rank";
        case NNPLUG_CHECK_DTYPE:
            return "dtype";
        case NNPLUG_CHECK_FORMAT:
            return "format";
        case NNPLUG_CHECK_SHAPE:
            return "shape";
        case NNPLUG_CHECK_ATTRS:
            return "attributes";
        case NNPLUG_CHECK_PROMOTION:
            return "promotion";
    }
    return "?";
}

void print_operand(const nnplug_op_schema& op, size_t slot) {
    const nnplug_operand_schema& operand = op.operands[slot];
    std::string rules = shape_text(operand.shape, op.reduced_shape);
    if (operand.optional) rules += ", optional";
    if (operand.same_format) rules += ", self's format";
    if (operand.promotes) rules += ", promotes";
    if (operand.dtype_of >= 0) rules += fmt::format(", dtype of {}", op.operands[operand.dtype_of].name);
    if (operand.rounded_to_promoted) rules += ", rounded to the promoted dtype";
    std::vector<const char*> dtypes;
    for (int32_t d = 0; d < NNPLUG_DTYPE_COUNT; ++d)
        if (operand.dtypes & NNPLUG_DTYPE_BIT(d)) dtypes.push_back(nnplug_dtype_name(d));
    rules += fmt::format(", {}", fmt::join(dtypes, "/"));
    if (operand.ranks != 0) {
        std::vector<int> ranks;
        for (int r = 0; r <= NNPLUG_MAX_DIMS; ++r)
            if ((operand.ranks >> r) & 1u) ranks.push_back(r);
        rules += fmt::format(", {} dims", fmt::join(ranks, " or "));
    }
    fmt::print("    {} {:<18} {:<7} {}\n", slot, operand.name, operand.output ? "output" : "input", rules);
}

void print_attr(const nnplug_attr_schema& attr) {
    switch (attr.type) {
        case NNPLUG_ATTR_ARG_INT64:
            fmt::print("    {:<24} int64 {} to {}: {}{}\n", attr.name, attr.min, attr.max, attr.range,
                       attr.negative_ignores_nothing ? "; a negative value ignores nothing" : "");
            return;
        case NNPLUG_ATTR_ARG_DOUBLE:
        case NNPLUG_ATTR_ARG_FLOAT:
            fmt::print("    {:<24} {} {}\n", attr.name,
                       attr.type == NNPLUG_ATTR_ARG_FLOAT ? "float" : "double",
                       attr.range != nullptr ? attr.range : "(any value)");
            return;
        case NNPLUG_ATTR_ARG_BOOL:
            fmt::print("    {:<24} bool\n", attr.name);
            return;
        case NNPLUG_ATTR_ARG_REDUCTION_WORD:
            fmt::print("    {:<24} char*: \"none\", \"mean\" or \"sum\"\n", attr.name);
            return;
    }
}

// Every op's published schema: its operands in slot order, attributes, check order and
// reduction rules.
void print_dtype_steps(const nnplug_op_schema& op) {
    std::vector<std::string> steps;
    for (size_t k = 0; k < op.dtype_step_count; ++k) {
        const nnplug_dtype_step& step = op.dtype_steps[k];
        const char* name = op.operands[step.slot].name;
        steps.push_back(
            step.rule == NNPLUG_DTYPE_IN_SET ? fmt::format("{} in its set", name)
            : step.rule == NNPLUG_DTYPE_EQUALS_OTHER
                ? fmt::format("{} equal to {}", name, op.operands[op.operands[step.slot].dtype_of].name)
                : fmt::format("{} cast from self", name));
    }
    fmt::print("  dtype checks in order: {}\n", fmt::join(steps, ", "));
}

int print_op_schemas() {
    for (size_t i = 0; i < nnplug_op_schema_count(); ++i) {
        const nnplug_op_schema& op = *nnplug_op_schema_at(i);
        fmt::print("{} (op kind {})\n  operands:\n", op.api, static_cast<int>(op.kind));
        for (size_t slot = 0; slot < op.operand_count; ++slot) print_operand(op, slot);
        fmt::print("  attributes:\n");
        for (size_t a = 0; a < op.attr_count; ++a) print_attr(op.attrs[a]);
        if (op.gradient_of >= 0)
            fmt::print("  gradient of {} with respect to self\n", nnplug_op_api_name(op.gradient_of));
        if (op.class_axis == NNPLUG_CLASS_AXIS_SECOND_OR_ONLY)
            fmt::print("  class axis: dim 1 of self, or dim 0 when self has one dim\n");
        std::vector<const char*> checks;
        for (size_t c = 0; c < op.check_count; ++c) checks.push_back(check_text(op.checks[c]));
        fmt::print("  checks: {}{}\n", fmt::join(checks, ", "),
                   op.has_extra_check ? ", then an op-specific rule" : "");
        if (op.dtype_step_count > 0) print_dtype_steps(op);
        if (op.attr_status != ACLNN_ERR_PARAM_INVALID)
            fmt::print("  a refused attribute returns {}\n", static_cast<int>(op.attr_status));
        fmt::print("  empty input: {}; mean over {}\n",
                   op.empty_reduction_written ? "a reduced output is written (mean NaN, sum 0)"
                                              : "nothing is written",
                   op.mean_count == NNPLUG_MEAN_OVER_SELF      ? "self's elements"
                   : op.mean_count == NNPLUG_MEAN_OVER_WEIGHTS ? "the counted rows' weights"
                                                               : "the iteration space");
        fmt::print("  promise: {}\n",
                   op.promise == NNPLUG_PROMISE_CANONICAL_BITS
                       ? "the canonical float32 expression, bit for bit"
                   : op.promise == NNPLUG_PROMISE_CANONICAL_ORDER
                       ? "the canonical float32 expression, bit for bit given the backend's exp and log"
                       : "within the stated tolerance of float64");
    }
    fmt::print("{} op(s)\n", nnplug_op_schema_count());
    return 0;
}

}  // namespace

Command info_command(CLI::App& app) {
    auto config = std::make_shared<std::string>();
    CLI::App* sub =
        app.add_subcommand("info", "Show the config, the plugins found or refused, and where each op runs");
    sub->footer(
        "Reads the config as aclInit would (--config, else $NNPLUG_CONFIG, else the installed default.yaml; "
        "NNPLUG_BACKEND, NNPLUG_LOG_LEVEL and NNPLUG_ALLOW_INSECURE_PLUGINS apply) and loads each plugin "
        "after "
        "the same trust checks. Exits 1 when the config cannot be used.");
    sub->add_option("-c,--config", *config, "the config file aclInit would be given");
    auto ops = std::make_shared<bool>(false);
    sub->add_flag("--ops", *ops,
                  "instead, list every op's operands, attributes and checks as libnnplug publishes them");
    return {sub, [config, ops] { return *ops ? print_op_schemas() : print_inventory(*config); }};
}

}  // namespace nnplug::cli
