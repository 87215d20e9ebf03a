/*
 * Every op's rules as libnnplug applies them, published read-only as plain C data: its
 * operands in slot order (nnplug/op_slots.h) with their shape, format, promotion and dtype
 * rules and the dtype each input is computed in, its attributes with their ranges, the
 * order of its first-phase checks, its reduced-output rules and its numeric promise.
 * Generated at run time from the schemas the runtime itself checks calls against, so a
 * tool that reads them sees exactly what the runtime enforces.
 *
 *   for (size_t i = 0; i < nnplug_op_schema_count(); ++i) {
 *       const nnplug_op_schema* op = nnplug_op_schema_at(i);  // ordered by op kind
 *       ...
 *   }
 *
 * The data lives as long as libnnplug is loaded; nothing needs aclInit. Enum values are
 * appended, never renumbered.
 */
#ifndef NNPLUG_OP_SCHEMA_H
#define NNPLUG_OP_SCHEMA_H

#include <aclnn/acl_meta.h>
#include <nnplug/op_slots.h>
#include <nnplug/plugin.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* How an operand's shape relates to the iteration space. Without
 * NNPLUG_SHAPE_BROADCASTS_MUTUALLY operands the iteration space is self's shape; with
 * them it is the shape self and they broadcast to together (NumPy's two-way rules). */
typedef enum nnplug_shape_rule {
    NNPLUG_SHAPE_ITERATION = 0,                   /* self: defines the iteration space */
    NNPLUG_SHAPE_EQUALS_ITERATION = 1,            /* exactly the iteration space's shape */
    NNPLUG_SHAPE_EQUALS_ITERATION_EVEN_EMPTY = 2, /* the same, checked even for an empty self */
    NNPLUG_SHAPE_BROADCASTS_TO = 3,               /* broadcasts one way to self's shape */
    NNPLUG_SHAPE_BROADCASTS_MUTUALLY = 4,         /* broadcasts with self to a common shape */
    NNPLUG_SHAPE_ITERATION_OR_REDUCED = 5,        /* the iteration shape, or reduced (see
                                                     nnplug_reduced_shape) when reducing */
    /* Rules of an op with a class axis (nnplug_op_schema.class_axis): */
    NNPLUG_SHAPE_CLASS_ROWS = 6,            /* self's shape without the class axis (a target) */
    NNPLUG_SHAPE_CLASS_ROWS_OR_REDUCED = 7, /* that, or reduced when reducing */
    NNPLUG_SHAPE_CLASSES = 8,               /* (C): one element per class (a weight) */
    NNPLUG_SHAPE_ONE_ELEMENT = 9,           /* [] or [1] whatever the reduction */
    NNPLUG_SHAPE_IGNORED = 10               /* any shape: an argument the API has but nothing
                                               reads or writes (null and dtype checked) */
} nnplug_shape_rule;

/* Where an op's class axis is. */
typedef enum nnplug_class_axis {
    NNPLUG_CLASS_AXIS_NONE = 0,          /* an elementwise op */
    NNPLUG_CLASS_AXIS_SECOND_OR_ONLY = 1 /* dim 1 of self, or dim 0 when self has one dim */
} nnplug_class_axis;

/* The C type of an attribute argument. */
typedef enum nnplug_attr_arg_type {
    NNPLUG_ATTR_ARG_INT64 = 0,
    NNPLUG_ATTR_ARG_DOUBLE = 1,
    NNPLUG_ATTR_ARG_FLOAT = 2,
    NNPLUG_ATTR_ARG_BOOL = 3,
    NNPLUG_ATTR_ARG_REDUCTION_WORD = 4 /* char*: "none", "mean" or "sum" */
} nnplug_attr_arg_type;

/* What the run writes into a reduced output when self is empty. */
typedef enum nnplug_empty_value {
    NNPLUG_EMPTY_REDUCTION = 0, /* NaN for mean, 0 for sum */
    NNPLUG_EMPTY_ZERO = 1       /* 0 */
} nnplug_empty_value;

/* The shapes a reduced output may have. */
typedef enum nnplug_reduced_shape {
    NNPLUG_REDUCED_SCALAR_OR_ONE = 0, /* [] or [1] */
    NNPLUG_REDUCED_SCALAR = 1         /* [] only */
} nnplug_reduced_shape;

/* The element count a mean divides by. */
typedef enum nnplug_mean_count {
    NNPLUG_MEAN_OVER_ITERATION = 0, /* the iteration space's */
    NNPLUG_MEAN_OVER_SELF = 1,      /* self's own, even where self broadcasts */
    NNPLUG_MEAN_OVER_WEIGHTS = 2    /* the sum of the counted rows' weights, from the data */
} nnplug_mean_count;

/* The first-phase checks, listed per op in the order its API documents them; the first
 * failing one decides the status and message. */
typedef enum nnplug_check {
    NNPLUG_CHECK_NULL = 0,     /* required tensors, workspaceSize and executor not null */
    NNPLUG_CHECK_RANK = 1,     /* at most NNPLUG_MAX_DIMS dims, and each operand's ranks */
    NNPLUG_CHECK_DTYPE = 2,    /* each operand's dtypes, the device's rule, dtype_of */
    NNPLUG_CHECK_FORMAT = 3,   /* same_format operands agree with self */
    NNPLUG_CHECK_SHAPE = 4,    /* the shape rules */
    NNPLUG_CHECK_ATTRS = 5,    /* attributes within range */
    NNPLUG_CHECK_PROMOTION = 6 /* the inputs promote to a type castable to every output */
} nnplug_check;

/* One kind of dtype check, as a step of an API's own order (nnplug_dtype_step). */
typedef enum nnplug_dtype_rule {
    NNPLUG_DTYPE_IN_SET = 0,        /* the operand's dtypes (and the device's dtype rule) */
    NNPLUG_DTYPE_EQUALS_OTHER = 1,  /* equal to the dtype of the operand its dtype_of names */
    NNPLUG_DTYPE_CAST_FROM_SELF = 2 /* self's dtype casts to it (no float to integer, no
                                       integer to bool) */
} nnplug_dtype_rule;

/* One dtype check of one operand. */
typedef struct nnplug_dtype_step {
    int32_t slot;
    nnplug_dtype_rule rule;
} nnplug_dtype_step;

/* What an op promises about the values it writes. */
typedef enum nnplug_numeric_promise {
    NNPLUG_PROMISE_TOLERANCE = 0,      /* within the tolerance its page states of a float64
                                          reference (exp, log and sums may round differently) */
    NNPLUG_PROMISE_CANONICAL_BITS = 1, /* every element is the op's canonical float32
                                          expression bit for bit, on every backend */
    NNPLUG_PROMISE_CANONICAL_ORDER = 2 /* every unreduced element is the op's canonical
                                          float32 expression bit for bit, given the backend's
                                          own values of the exp and log parts its page names;
                                          a reduced one is within the stated tolerance */
} nnplug_numeric_promise;

typedef struct nnplug_operand_schema {
    const char* name; /* as the aclnn signature spells it: "self", "weightOptional" */
    int32_t output;   /* written by the op */
    int32_t optional; /* may be null: the op's default applies */
    nnplug_shape_rule shape;
    int32_t same_format; /* its format must equal self's */
    int32_t promotes;    /* takes part in the inputs' dtype promotion */
    int32_t dtype_of;    /* the slot whose dtype this one's must equal, or -1 */
    /* Computed in the promoted dtype of the inputs that promote: an input that does not
     * promote is rounded to that dtype before use (then widened to float32). Otherwise an
     * input is used at its own dtype's value. */
    int32_t rounded_to_promoted;
    uint32_t dtypes;                /* NNPLUG_DTYPE_BIT set of the dtypes it may have */
    uint32_t ranks;                 /* bit r: r dims allowed; 0: any rank up to NNPLUG_MAX_DIMS */
    nnplug_empty_value empty_value; /* a reduced output's value over no elements */
} nnplug_operand_schema;

typedef struct nnplug_attr_schema {
    const char* name; /* as the aclnn signature spells it: "reduction" */
    nnplug_attr_key key;
    int64_t min, max;  /* the valid range of an integer, inclusive */
    const char* range; /* the range as error messages word it; null: any value of its type */
    nnplug_attr_arg_type type;
    double min_real, max_real;        /* the valid range of a double or float, inclusive */
    int32_t negative_ignores_nothing; /* an ignoreIndex whose negative values ignore nothing */
} nnplug_attr_schema;

typedef struct nnplug_op_schema {
    nnplug_op_kind kind;
    const char* api; /* the aclnn entry point: "aclnnMseLoss" */
    size_t operand_count;
    const nnplug_operand_schema* operands; /* in slot order */
    size_t attr_count;
    const nnplug_attr_schema* attrs; /* in signature order */
    size_t check_count;
    const nnplug_check* checks; /* in the order they run */
    /* A reduced output is written even over no elements (mean NaN, sum 0); otherwise an
     * empty self skips the shape rules and the run does nothing. */
    int32_t empty_reduction_written;
    nnplug_reduced_shape reduced_shape;
    nnplug_mean_count mean_count;
    /* The op has a further rule, run after the listed checks, that these tables cannot say. */
    int32_t has_extra_check;
    nnplug_numeric_promise promise;
    nnplug_class_axis class_axis;
    int32_t gradient_of; /* the nnplug_op_kind whose loss this op is the gradient of, or -1 */
    /* The status of a failed attribute check: ACLNN_ERR_PARAM_INVALID, or CANN's tiling
     * code 561002 where CANN's kernel tiling is what refuses the attribute. */
    aclnnStatus attr_status;
    /* NNPLUG_CHECK_DTYPE's steps in the order the API runs them (the first failing one
     * decides the message), then, for what no step covered, each operand's set in slot order
     * and each dtype_of. With no steps: only the latter. */
    size_t dtype_step_count;
    const nnplug_dtype_step* dtype_steps;
} nnplug_op_schema;

/* The nnplug_dtype an aclTensor of `dtype` is described with (the bits of
 * nnplug_operand_schema.dtypes), or -1 for a dtype no op takes. */
static inline int32_t nnplug_dtype_of_acl(aclDataType dtype) {
    switch (dtype) {
        case ACL_FLOAT:
            return NNPLUG_DTYPE_F32;
        case ACL_FLOAT16:
            return NNPLUG_DTYPE_F16;
        case ACL_BF16:
            return NNPLUG_DTYPE_BF16;
        case ACL_INT32:
            return NNPLUG_DTYPE_I32;
        case ACL_INT64:
            return NNPLUG_DTYPE_I64;
        case ACL_UINT8:
            return NNPLUG_DTYPE_U8;
        default:
            return -1;
    }
}

/* How many ops libnnplug implements. */
__attribute__((visibility("default"))) size_t nnplug_op_schema_count(void);

/* The i-th op's schema, ordered by kind; null when i >= nnplug_op_schema_count(). */
__attribute__((visibility("default"))) const nnplug_op_schema* nnplug_op_schema_at(size_t i);

/* One attribute argument of nnplug_op_get_workspace_size, in the C type its schema declares. */
typedef struct nnplug_attr_arg {
    nnplug_attr_arg_type type;
    int64_t i;        /* NNPLUG_ATTR_ARG_INT64 */
    double f;         /* NNPLUG_ATTR_ARG_DOUBLE and NNPLUG_ATTR_ARG_FLOAT */
    int32_t b;        /* NNPLUG_ATTR_ARG_BOOL: 0 or 1 */
    const char* word; /* NNPLUG_ATTR_ARG_REDUCTION_WORD */
} nnplug_attr_arg;

/* The first phase of the op `op` (a schema nnplug_op_schema_at returned) called by its schema:
 * its tensor arguments in slot order (`operand_count` of them, null for an absent one) and its
 * attributes in signature order (`attr_count` of them, each of its declared type). Exactly
 * what <op->api>GetWorkspaceSize does with the same arguments; the second phase is <op->api>.
 * An attribute of another type than declared is ACLNN_ERR_PARAM_INVALID. For tools and
 * language bindings that call any op without a prototype per op. */
__attribute__((visibility("default"))) aclnnStatus nnplug_op_get_workspace_size(
    const nnplug_op_schema* op, const aclTensor* const* tensors, const nnplug_attr_arg* attrs,
    uint64_t* workspaceSize, aclOpExecutor** executor);

#ifdef __cplusplus
}
#endif

#endif /* NNPLUG_OP_SCHEMA_H */
