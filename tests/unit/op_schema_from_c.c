/* A C program's reading of the published op schemas (nnplug/op_schema.h): one line per
 * op, written from C so op_schema_test can compare it with the same text written from
 * C++ (a struct laid out differently by the two compilers would not match). */
#include <nnplug/op_schema.h>
#include <stdio.h>

_Static_assert(NNPLUG_SHAPE_BROADCASTS_MUTUALLY == 4 && NNPLUG_CHECK_PROMOTION == 6,
               "the published enums keep their values");

static size_t append(char* text, size_t size, size_t used, const char* format, const char* a, long long b,
                     long long c) {
    if (used >= size) {
        return used;
    }
    const int n = snprintf(text + used, size - used, format, a, b, c);
    return n < 0 ? size : used + (size_t)n;
}

/* Writes "<api> <kind>: <name>/<output><optional><shape><same_format><promotes>d<dtype_of>
 * r<rounded_to_promoted>t<dtypes>k<ranks>e<empty value> ... | <attr>[min,max]:<type>/<max_real*1000 +
 * negative ignores nothing> | checks <c>... <promise><empty><reduced><mean><extra>\naxis <class axis>\n"
 * per op; returns the length. */
size_t nnplug_test_schema_text_from_c(char* text, size_t size) {
    size_t used = 0;
    for (size_t i = 0; i < nnplug_op_schema_count(); ++i) {
        const nnplug_op_schema* op = nnplug_op_schema_at(i);
        used = append(text, size, used, "%s %lld:", op->api, op->kind, 0);
        for (size_t s = 0; s < op->operand_count; ++s) {
            const nnplug_operand_schema* operand = &op->operands[s];
            used = append(text, size, used, " %s/%lld", operand->name,
                          operand->output * 10000 + operand->optional * 1000 + operand->shape * 100 +
                              operand->same_format * 10 + operand->promotes,
                          0);
            used = append(text, size, used, "%s%lld", "d", operand->dtype_of, 0);
            used = append(text, size, used, "%s%lld", "r", operand->rounded_to_promoted, 0);
            used = append(text, size, used, "%st%lldk%lld", "", operand->dtypes, operand->ranks);
            used = append(text, size, used, "%s%lld", "e", operand->empty_value, 0);
        }
        for (size_t a = 0; a < op->attr_count; ++a) {
            used = append(text, size, used, " | %s[%lld,%lld]", op->attrs[a].name, op->attrs[a].min,
                          op->attrs[a].max);
            used = append(text, size, used, "%s:%lld/%lld", "", op->attrs[a].type,
                          (long long)(op->attrs[a].max_real * 1000) + op->attrs[a].negative_ignores_nothing);
        }
        used = append(text, size, used, " | checks%s", "", 0, 0);
        for (size_t c = 0; c < op->check_count; ++c) {
            used = append(text, size, used, "%s%lld", " ", op->checks[c], 0);
        }
        used = append(text, size, used, " %s%lld\n", "",
                      op->promise * 10000 + op->empty_reduction_written * 1000 + op->reduced_shape * 100 +
                          op->mean_count * 10 + op->has_extra_check,
                      0);
        used =
            append(text, size, used, "%saxis %lld gradient of %lld\n", "", op->class_axis, op->gradient_of);
    }
    return used;
}
