/*
 * The ops of the plugin ABI, the operand slot of each of their tensors in
 * nnplug_op_desc.operands, and the attribute keys. Part of the ABI (included by
 * nnplug/plugin.h): values are appended, never renumbered or reused.
 *
 * Slots follow the order of the aclnn entry point's tensor arguments.
 */
#ifndef NNPLUG_OP_SLOTS_H
#define NNPLUG_OP_SLOTS_H

typedef enum nnplug_op_kind {
    NNPLUG_OP_BCE_FORWARD = 0,                     /* aclnnBinaryCrossEntropy */
    NNPLUG_OP_BCE_BACKWARD = 1,                    /* aclnnBinaryCrossEntropyBackward */
    NNPLUG_OP_BCE_WITH_LOGITS = 2,                 /* aclnnBinaryCrossEntropyWithLogits */
    NNPLUG_OP_BCE_WITH_LOGITS_BACKWARD = 3,        /* aclnnBinaryCrossEntropyWithLogitsBackward */
    NNPLUG_OP_BCE_WITH_LOGITS_TARGET_BACKWARD = 4, /* aclnnBinaryCrossEntropyWithLogitsTargetBackward */
    NNPLUG_OP_MSE_LOSS = 5,                        /* aclnnMseLoss */
    NNPLUG_OP_MSE_LOSS_BACKWARD = 6                /* aclnnMseLossBackward */
} nnplug_op_kind;

/* One past the largest op kind this header knows; grows as ops are appended. */
#define NNPLUG_OP_KIND_COUNT 7

/* The aclnn entry point of an op kind ("aclnnBinaryCrossEntropy"), or null for a kind
 * this header does not know. Configs name ops this way (per-op routing). */
static inline const char* nnplug_op_api_name(int op) {
    switch (op) {
        case NNPLUG_OP_BCE_FORWARD:
            return "aclnnBinaryCrossEntropy";
        case NNPLUG_OP_BCE_BACKWARD:
            return "aclnnBinaryCrossEntropyBackward";
        case NNPLUG_OP_BCE_WITH_LOGITS:
            return "aclnnBinaryCrossEntropyWithLogits";
        case NNPLUG_OP_BCE_WITH_LOGITS_BACKWARD:
            return "aclnnBinaryCrossEntropyWithLogitsBackward";
        case NNPLUG_OP_BCE_WITH_LOGITS_TARGET_BACKWARD:
            return "aclnnBinaryCrossEntropyWithLogitsTargetBackward";
        case NNPLUG_OP_MSE_LOSS:
            return "aclnnMseLoss";
        case NNPLUG_OP_MSE_LOSS_BACKWARD:
            return "aclnnMseLossBackward";
        default:
            return 0;
    }
}

/* aclnnBinaryCrossEntropy(self, target, weight, reduction, out) */
enum nnplug_bce_slot {
    NNPLUG_BCE_SELF = 0,
    NNPLUG_BCE_TARGET = 1,
    NNPLUG_BCE_WEIGHT = 2, /* optional: absent means 1 */
    NNPLUG_BCE_OUT = 3,    /* NNPLUG_OPERAND_REDUCED for mean and sum */
    NNPLUG_BCE_OPERANDS = 4
};

/* aclnnBinaryCrossEntropyBackward(gradOutput, self, target, weightOptional, reduction, out) */
enum nnplug_bce_backward_slot {
    NNPLUG_BCE_BACKWARD_GRAD_OUTPUT = 0,
    NNPLUG_BCE_BACKWARD_SELF = 1,
    NNPLUG_BCE_BACKWARD_TARGET = 2,
    NNPLUG_BCE_BACKWARD_WEIGHT = 3, /* optional: absent means 1 */
    NNPLUG_BCE_BACKWARD_OUT = 4,
    NNPLUG_BCE_BACKWARD_OPERANDS = 5
};

/* aclnnBinaryCrossEntropyWithLogits(self, target, weightOptional, posWeightOptional, reduction, out) */
enum nnplug_bce_with_logits_slot {
    NNPLUG_BCE_WITH_LOGITS_SELF = 0,
    NNPLUG_BCE_WITH_LOGITS_TARGET = 1,
    NNPLUG_BCE_WITH_LOGITS_WEIGHT = 2,     /* optional: absent means 1 */
    NNPLUG_BCE_WITH_LOGITS_POS_WEIGHT = 3, /* optional: absent is not the same as 1 (another order) */
    NNPLUG_BCE_WITH_LOGITS_OUT = 4,        /* NNPLUG_OPERAND_REDUCED for mean and sum */
    NNPLUG_BCE_WITH_LOGITS_OPERANDS = 5
};

/* aclnnBinaryCrossEntropyWithLogitsBackward(gradOutput, self, target, weightOptional,
 * posWeightOptional, reduction, out), and the TargetBackward op with gradTarget in out's slot. */
enum nnplug_bce_with_logits_backward_slot {
    NNPLUG_BCE_WITH_LOGITS_BACKWARD_GRAD_OUTPUT = 0,
    NNPLUG_BCE_WITH_LOGITS_BACKWARD_SELF = 1,
    NNPLUG_BCE_WITH_LOGITS_BACKWARD_TARGET = 2,
    NNPLUG_BCE_WITH_LOGITS_BACKWARD_WEIGHT = 3,     /* optional: absent means 1 */
    NNPLUG_BCE_WITH_LOGITS_BACKWARD_POS_WEIGHT = 4, /* optional */
    NNPLUG_BCE_WITH_LOGITS_BACKWARD_OUT = 5,        /* out, or gradTarget */
    NNPLUG_BCE_WITH_LOGITS_BACKWARD_OPERANDS = 6
};

/* aclnnMseLoss(self, target, reduction, out): self and target broadcast to each other */
enum nnplug_mse_loss_slot {
    NNPLUG_MSE_LOSS_SELF = 0,
    NNPLUG_MSE_LOSS_TARGET = 1,
    NNPLUG_MSE_LOSS_OUT = 2, /* NNPLUG_OPERAND_REDUCED for mean and sum */
    NNPLUG_MSE_LOSS_OPERANDS = 3
};

/* aclnnMseLossBackward(gradOutput, self, target, reduction, out): the three inputs broadcast
 * to each other; NNPLUG_ATTR_SCALE is 1/numel(self) for mean */
enum nnplug_mse_loss_backward_slot {
    NNPLUG_MSE_LOSS_BACKWARD_GRAD_OUTPUT = 0,
    NNPLUG_MSE_LOSS_BACKWARD_SELF = 1,
    NNPLUG_MSE_LOSS_BACKWARD_TARGET = 2,
    NNPLUG_MSE_LOSS_BACKWARD_OUT = 3,
    NNPLUG_MSE_LOSS_BACKWARD_OPERANDS = 4
};

typedef enum nnplug_reduction {
    NNPLUG_REDUCTION_NONE = 0,
    NNPLUG_REDUCTION_MEAN = 1,
    NNPLUG_REDUCTION_SUM = 2
} nnplug_reduction;

/* Attribute keys. The runtime derives SCALE and REDUCE_COUNT once, so no backend
 * re-derives an op's semantics. */
typedef enum nnplug_attr_key {
    NNPLUG_ATTR_REDUCTION = 1,     /* i64, nnplug_reduction */
    NNPLUG_ATTR_SCALE = 2,         /* f64: the factor the op's result is multiplied by, 1/N
                                      for mean and 1 otherwise; float32 kernels use (float)scale */
    NNPLUG_ATTR_REDUCE_COUNT = 3,  /* i64: N, the element count the mean divides by */
    NNPLUG_ATTR_PROMOTED_DTYPE = 4 /* i64, nnplug_dtype: the promoted type of the inputs that
                                      take part in promotion; an input that does not (the
                                      with-logits loss's weight and posWeight) is rounded to
                                      it before it is widened to float32 */
} nnplug_attr_key;

#endif /* NNPLUG_OP_SLOTS_H */
