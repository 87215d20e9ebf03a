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
    NNPLUG_OP_BINARY_CROSS_ENTROPY = 0,                      /* aclnnBinaryCrossEntropy */
    NNPLUG_OP_BINARY_CROSS_ENTROPY_BACKWARD = 1,             /* aclnnBinaryCrossEntropyBackward */
    NNPLUG_OP_BINARY_CROSS_ENTROPY_WITH_LOGITS = 2,          /* aclnnBinaryCrossEntropyWithLogits */
    NNPLUG_OP_BINARY_CROSS_ENTROPY_WITH_LOGITS_BACKWARD = 3, /* aclnnBinaryCrossEntropyWithLogitsBackward */
    NNPLUG_OP_BINARY_CROSS_ENTROPY_WITH_LOGITS_TARGET_BACKWARD =
        4,                                    /* aclnnBinaryCrossEntropyWithLogitsTargetBackward */
    NNPLUG_OP_MSE_LOSS = 5,                   /* aclnnMseLoss */
    NNPLUG_OP_MSE_LOSS_BACKWARD = 6,          /* aclnnMseLossBackward */
    NNPLUG_OP_NLL_LOSS = 7,                   /* aclnnNLLLoss */
    NNPLUG_OP_NLL_LOSS_2D = 8,                /* aclnnNLLLoss2d */
    NNPLUG_OP_NLL_LOSS_BACKWARD = 9,          /* aclnnNLLLossBackward */
    NNPLUG_OP_NLL_LOSS_2D_BACKWARD = 10,      /* aclnnNLLLoss2dBackward */
    NNPLUG_OP_CROSS_ENTROPY_LOSS = 11,        /* aclnnCrossEntropyLoss */
    NNPLUG_OP_CROSS_ENTROPY_LOSS_GRAD = 12,   /* aclnnCrossEntropyLossGrad */
    NNPLUG_OP_L1_LOSS = 13,                   /* aclnnL1Loss */
    NNPLUG_OP_L1_LOSS_BACKWARD = 14,          /* aclnnL1LossBackward */
    NNPLUG_OP_SMOOTH_L1_LOSS = 15,            /* aclnnSmoothL1Loss */
    NNPLUG_OP_SMOOTH_L1_LOSS_BACKWARD = 16,   /* aclnnSmoothL1LossBackward */
    NNPLUG_OP_SOFT_MARGIN_LOSS = 17,          /* aclnnSoftMarginLoss */
    NNPLUG_OP_SOFT_MARGIN_LOSS_BACKWARD = 18, /* aclnnSoftMarginLossBackward */
    NNPLUG_OP_KL_DIV = 19,                    /* aclnnKlDiv */
    NNPLUG_OP_KL_DIV_BACKWARD = 20,           /* aclnnKlDivBackward */
    NNPLUG_OP_KL_DIV_TARGET_BACKWARD = 21     /* aclnnKlDivTargetBackward */
} nnplug_op_kind;

/* One past the largest op kind this header knows; grows as ops are appended. */
#define NNPLUG_OP_KIND_COUNT 22

/* The aclnn entry point of an op kind ("aclnnBinaryCrossEntropy"), or null for a kind
 * this header does not know. Configs name ops this way (per-op routing). */
static inline const char* nnplug_op_api_name(int op) {
    switch (op) {
        case NNPLUG_OP_BINARY_CROSS_ENTROPY:
            return "aclnnBinaryCrossEntropy";
        case NNPLUG_OP_BINARY_CROSS_ENTROPY_BACKWARD:
            return "aclnnBinaryCrossEntropyBackward";
        case NNPLUG_OP_BINARY_CROSS_ENTROPY_WITH_LOGITS:
            return "aclnnBinaryCrossEntropyWithLogits";
        case NNPLUG_OP_BINARY_CROSS_ENTROPY_WITH_LOGITS_BACKWARD:
            return "aclnnBinaryCrossEntropyWithLogitsBackward";
        case NNPLUG_OP_BINARY_CROSS_ENTROPY_WITH_LOGITS_TARGET_BACKWARD:
            return "aclnnBinaryCrossEntropyWithLogitsTargetBackward";
        case NNPLUG_OP_MSE_LOSS:
            return "aclnnMseLoss";
        case NNPLUG_OP_MSE_LOSS_BACKWARD:
            return "aclnnMseLossBackward";
        case NNPLUG_OP_NLL_LOSS:
            return "aclnnNLLLoss";
        case NNPLUG_OP_NLL_LOSS_2D:
            return "aclnnNLLLoss2d";
        case NNPLUG_OP_NLL_LOSS_BACKWARD:
            return "aclnnNLLLossBackward";
        case NNPLUG_OP_NLL_LOSS_2D_BACKWARD:
            return "aclnnNLLLoss2dBackward";
        case NNPLUG_OP_CROSS_ENTROPY_LOSS:
            return "aclnnCrossEntropyLoss";
        case NNPLUG_OP_CROSS_ENTROPY_LOSS_GRAD:
            return "aclnnCrossEntropyLossGrad";
        case NNPLUG_OP_L1_LOSS:
            return "aclnnL1Loss";
        case NNPLUG_OP_L1_LOSS_BACKWARD:
            return "aclnnL1LossBackward";
        case NNPLUG_OP_SMOOTH_L1_LOSS:
            return "aclnnSmoothL1Loss";
        case NNPLUG_OP_SMOOTH_L1_LOSS_BACKWARD:
            return "aclnnSmoothL1LossBackward";
        case NNPLUG_OP_SOFT_MARGIN_LOSS:
            return "aclnnSoftMarginLoss";
        case NNPLUG_OP_SOFT_MARGIN_LOSS_BACKWARD:
            return "aclnnSoftMarginLossBackward";
        case NNPLUG_OP_KL_DIV:
            return "aclnnKlDiv";
        case NNPLUG_OP_KL_DIV_BACKWARD:
            return "aclnnKlDivBackward";
        case NNPLUG_OP_KL_DIV_TARGET_BACKWARD:
            return "aclnnKlDivTargetBackward";
        default:
            return 0;
    }
}

/* aclnnBinaryCrossEntropy(self, target, weight, reduction, out) */
enum nnplug_binary_cross_entropy_slot {
    NNPLUG_BINARY_CROSS_ENTROPY_SELF = 0,
    NNPLUG_BINARY_CROSS_ENTROPY_TARGET = 1,
    NNPLUG_BINARY_CROSS_ENTROPY_WEIGHT = 2, /* optional: absent means 1 */
    NNPLUG_BINARY_CROSS_ENTROPY_OUT = 3,    /* NNPLUG_OPERAND_REDUCED for mean and sum */
    NNPLUG_BINARY_CROSS_ENTROPY_OPERANDS = 4
};

/* aclnnBinaryCrossEntropyBackward(gradOutput, self, target, weightOptional, reduction, out) */
enum nnplug_binary_cross_entropy_backward_slot {
    NNPLUG_BINARY_CROSS_ENTROPY_BACKWARD_GRAD_OUTPUT = 0,
    NNPLUG_BINARY_CROSS_ENTROPY_BACKWARD_SELF = 1,
    NNPLUG_BINARY_CROSS_ENTROPY_BACKWARD_TARGET = 2,
    NNPLUG_BINARY_CROSS_ENTROPY_BACKWARD_WEIGHT = 3, /* optional: absent means 1 */
    NNPLUG_BINARY_CROSS_ENTROPY_BACKWARD_OUT = 4,
    NNPLUG_BINARY_CROSS_ENTROPY_BACKWARD_OPERANDS = 5
};

/* aclnnBinaryCrossEntropyWithLogits(self, target, weightOptional, posWeightOptional, reduction, out) */
enum nnplug_binary_cross_entropy_with_logits_slot {
    NNPLUG_BINARY_CROSS_ENTROPY_WITH_LOGITS_SELF = 0,
    NNPLUG_BINARY_CROSS_ENTROPY_WITH_LOGITS_TARGET = 1,
    NNPLUG_BINARY_CROSS_ENTROPY_WITH_LOGITS_WEIGHT = 2, /* optional: absent means 1 */
    NNPLUG_BINARY_CROSS_ENTROPY_WITH_LOGITS_POS_WEIGHT =
        3, /* optional: absent is not the same as 1 (another order) */
    NNPLUG_BINARY_CROSS_ENTROPY_WITH_LOGITS_OUT = 4, /* NNPLUG_OPERAND_REDUCED for mean and sum */
    NNPLUG_BINARY_CROSS_ENTROPY_WITH_LOGITS_OPERANDS = 5
};

/* aclnnBinaryCrossEntropyWithLogitsBackward(gradOutput, self, target, weightOptional,
 * posWeightOptional, reduction, out), and the TargetBackward op with gradTarget in out's slot. */
enum nnplug_binary_cross_entropy_with_logits_backward_slot {
    NNPLUG_BINARY_CROSS_ENTROPY_WITH_LOGITS_BACKWARD_GRAD_OUTPUT = 0,
    NNPLUG_BINARY_CROSS_ENTROPY_WITH_LOGITS_BACKWARD_SELF = 1,
    NNPLUG_BINARY_CROSS_ENTROPY_WITH_LOGITS_BACKWARD_TARGET = 2,
    NNPLUG_BINARY_CROSS_ENTROPY_WITH_LOGITS_BACKWARD_WEIGHT = 3,     /* optional: absent means 1 */
    NNPLUG_BINARY_CROSS_ENTROPY_WITH_LOGITS_BACKWARD_POS_WEIGHT = 4, /* optional */
    NNPLUG_BINARY_CROSS_ENTROPY_WITH_LOGITS_BACKWARD_OUT = 5,        /* out, or gradTarget */
    NNPLUG_BINARY_CROSS_ENTROPY_WITH_LOGITS_BACKWARD_OPERANDS = 6
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

/* aclnnNLLLoss and aclnnNLLLoss2d(self, target, weight, reduction, ignoreIndex, out,
 * totalWeightOut): ops with a class axis (nnplug_op_desc.class_axis). */
enum nnplug_nll_loss_slot {
    NNPLUG_NLL_LOSS_SELF = 0,         /* log-probabilities (N, C), (C) or (N, C, H, W) */
    NNPLUG_NLL_LOSS_TARGET = 1,       /* class indices, lacking the class axis; integer dtype */
    NNPLUG_NLL_LOSS_WEIGHT = 2,       /* (C), indexed by class */
    NNPLUG_NLL_LOSS_OUT = 3,          /* per row, or NNPLUG_OPERAND_REDUCED for mean and sum */
    NNPLUG_NLL_LOSS_TOTAL_WEIGHT = 4, /* NNPLUG_OPERAND_REDUCED: the counted rows' weight sum */
    NNPLUG_NLL_LOSS_OPERANDS = 5
};

/* aclnnNLLLossBackward and aclnnNLLLoss2dBackward(gradOutput, self, target, weight, reduction,
 * ignoreIndex, totalWeight, out): the mean divides by totalWeight as given. */
enum nnplug_nll_loss_backward_slot {
    NNPLUG_NLL_LOSS_BACKWARD_GRAD_OUTPUT = 0, /* per row, or NNPLUG_OPERAND_REDUCED */
    NNPLUG_NLL_LOSS_BACKWARD_SELF = 1,
    NNPLUG_NLL_LOSS_BACKWARD_TARGET = 2,
    NNPLUG_NLL_LOSS_BACKWARD_WEIGHT = 3,
    NNPLUG_NLL_LOSS_BACKWARD_TOTAL_WEIGHT = 4, /* NNPLUG_OPERAND_REDUCED */
    NNPLUG_NLL_LOSS_BACKWARD_OUT = 5,          /* self's shape */
    NNPLUG_NLL_LOSS_BACKWARD_OPERANDS = 6
};

/* aclnnCrossEntropyLoss(input, target, weightOptional, reductionOptional, ignoreIndex,
 * labelSmoothing, lseSquareScaleForZloss, returnZloss, lossOut, logProbOut, zlossOut,
 * lseForZlossOut) */
enum nnplug_cross_entropy_loss_slot {
    NNPLUG_CROSS_ENTROPY_LOSS_INPUT = 0,         /* logits (N, C) */
    NNPLUG_CROSS_ENTROPY_LOSS_TARGET = 1,        /* class indices (N); integer dtype */
    NNPLUG_CROSS_ENTROPY_LOSS_WEIGHT = 2,        /* optional (C): absent means 1 */
    NNPLUG_CROSS_ENTROPY_LOSS_LOSS = 3,          /* (N), or NNPLUG_OPERAND_REDUCED */
    NNPLUG_CROSS_ENTROPY_LOSS_LOG_PROB = 4,      /* (N, C): log_softmax(input) */
    NNPLUG_CROSS_ENTROPY_LOSS_ZLOSS = 5,         /* optional: written when returnZloss */
    NNPLUG_CROSS_ENTROPY_LOSS_LSE_FOR_ZLOSS = 6, /* optional: written when returnZloss */
    NNPLUG_CROSS_ENTROPY_LOSS_OPERANDS = 7
};

/* aclnnCrossEntropyLossGrad(gradLoss, logProb, target, weightOptional, gradZlossOptional,
 * lseForZlossOptional, reductionOptional, ignoreIndex, labelSmoothing, lseSquareScaleForZloss,
 * out) */
enum nnplug_cross_entropy_loss_grad_slot {
    NNPLUG_CROSS_ENTROPY_LOSS_GRAD_GRAD_LOSS = 0, /* (N), or NNPLUG_OPERAND_REDUCED */
    NNPLUG_CROSS_ENTROPY_LOSS_GRAD_LOG_PROB = 1,  /* (N, C) */
    NNPLUG_CROSS_ENTROPY_LOSS_GRAD_TARGET = 2,
    NNPLUG_CROSS_ENTROPY_LOSS_GRAD_WEIGHT = 3,        /* optional (C) */
    NNPLUG_CROSS_ENTROPY_LOSS_GRAD_GRAD_ZLOSS = 4,    /* optional */
    NNPLUG_CROSS_ENTROPY_LOSS_GRAD_LSE_FOR_ZLOSS = 5, /* optional */
    NNPLUG_CROSS_ENTROPY_LOSS_GRAD_OUT = 6,           /* (N, C) */
    NNPLUG_CROSS_ENTROPY_LOSS_GRAD_OPERANDS = 7
};

/* aclnnL1Loss(self, target, reduction, out): self and target broadcast to each other */
enum nnplug_l1_loss_slot {
    NNPLUG_L1_LOSS_SELF = 0,
    NNPLUG_L1_LOSS_TARGET = 1,
    NNPLUG_L1_LOSS_OUT = 2, /* NNPLUG_OPERAND_REDUCED for mean and sum */
    NNPLUG_L1_LOSS_OPERANDS = 3
};

/* aclnnL1LossBackward(gradOutput, self, target, reduction, gradInput): the three inputs
 * broadcast to each other; NNPLUG_ATTR_SCALE is 1/numel(broadcast shape) for mean */
enum nnplug_l1_loss_backward_slot {
    NNPLUG_L1_LOSS_BACKWARD_GRAD_OUTPUT = 0,
    NNPLUG_L1_LOSS_BACKWARD_SELF = 1,
    NNPLUG_L1_LOSS_BACKWARD_TARGET = 2,
    NNPLUG_L1_LOSS_BACKWARD_GRAD_INPUT = 3,
    NNPLUG_L1_LOSS_BACKWARD_OPERANDS = 4
};

/* aclnnSmoothL1Loss(self, target, reduction, beta, result): self and target broadcast to each
 * other; NNPLUG_ATTR_BETA */
enum nnplug_smooth_l1_loss_slot {
    NNPLUG_SMOOTH_L1_LOSS_SELF = 0,
    NNPLUG_SMOOTH_L1_LOSS_TARGET = 1,
    NNPLUG_SMOOTH_L1_LOSS_RESULT = 2, /* NNPLUG_OPERAND_REDUCED for mean and sum */
    NNPLUG_SMOOTH_L1_LOSS_OPERANDS = 3
};

/* aclnnSmoothL1LossBackward(gradOut, self, target, reduction, beta, gradInput): the three
 * inputs broadcast to each other; NNPLUG_ATTR_SCALE is 1/numel(broadcast shape) for mean */
enum nnplug_smooth_l1_loss_backward_slot {
    NNPLUG_SMOOTH_L1_LOSS_BACKWARD_GRAD_OUT = 0,
    NNPLUG_SMOOTH_L1_LOSS_BACKWARD_SELF = 1,
    NNPLUG_SMOOTH_L1_LOSS_BACKWARD_TARGET = 2,
    NNPLUG_SMOOTH_L1_LOSS_BACKWARD_GRAD_INPUT = 3,
    NNPLUG_SMOOTH_L1_LOSS_BACKWARD_OPERANDS = 4
};

/* aclnnSoftMarginLoss(self, target, reduction, out): self and target broadcast to each other */
enum nnplug_soft_margin_loss_slot {
    NNPLUG_SOFT_MARGIN_LOSS_SELF = 0,
    NNPLUG_SOFT_MARGIN_LOSS_TARGET = 1, /* ±1 */
    NNPLUG_SOFT_MARGIN_LOSS_OUT = 2,    /* NNPLUG_OPERAND_REDUCED for mean and sum */
    NNPLUG_SOFT_MARGIN_LOSS_OPERANDS = 3
};

/* aclnnSoftMarginLossBackward(gradOutput, self, target, reduction, out): the three inputs
 * broadcast to each other; NNPLUG_ATTR_SCALE is 1/N for mean, N their broadcast element count */
enum nnplug_soft_margin_loss_backward_slot {
    NNPLUG_SOFT_MARGIN_LOSS_BACKWARD_GRAD_OUTPUT = 0,
    NNPLUG_SOFT_MARGIN_LOSS_BACKWARD_SELF = 1,
    NNPLUG_SOFT_MARGIN_LOSS_BACKWARD_TARGET = 2,
    NNPLUG_SOFT_MARGIN_LOSS_BACKWARD_OUT = 3,
    NNPLUG_SOFT_MARGIN_LOSS_BACKWARD_OPERANDS = 4
};

/* aclnnKlDiv(self, target, reduction, logTarget, out): self and target broadcast to each other;
 * batchmean arrives as NNPLUG_REDUCTION_MEAN with NNPLUG_ATTR_REDUCE_COUNT = self.size(0) */
enum nnplug_kl_div_slot {
    NNPLUG_KL_DIV_SELF = 0,
    NNPLUG_KL_DIV_TARGET = 1,
    NNPLUG_KL_DIV_OUT = 2, /* NNPLUG_OPERAND_REDUCED for mean, sum and batchmean */
    NNPLUG_KL_DIV_OPERANDS = 3
};

/* aclnnKlDivBackward(gradOutput, self, target, reduction, logTarget, out) and
 * aclnnKlDivTargetBackward with gradTarget in out's slot; NNPLUG_ATTR_SCALE is 1/N for mean
 * and 1/self.size(0) for batchmean */
enum nnplug_kl_div_backward_slot {
    NNPLUG_KL_DIV_BACKWARD_GRAD_OUTPUT = 0,
    NNPLUG_KL_DIV_BACKWARD_SELF = 1,
    NNPLUG_KL_DIV_BACKWARD_TARGET = 2,
    NNPLUG_KL_DIV_BACKWARD_OUT = 3, /* out, or gradTarget */
    NNPLUG_KL_DIV_BACKWARD_OPERANDS = 4
};

typedef enum nnplug_reduction {
    NNPLUG_REDUCTION_NONE = 0,
    NNPLUG_REDUCTION_MEAN = 1,
    NNPLUG_REDUCTION_SUM = 2
} nnplug_reduction;

/* Attribute keys. The runtime derives SCALE and REDUCE_COUNT once, so no backend
 * re-derives an op's semantics. */
typedef enum nnplug_attr_key {
    NNPLUG_ATTR_REDUCTION = 1,                  /* i64, nnplug_reduction */
    NNPLUG_ATTR_SCALE = 2,                      /* f64: the factor the op's result is multiplied by, 1/N
                                                   for mean and 1 otherwise; float32 kernels use (float)scale */
    NNPLUG_ATTR_REDUCE_COUNT = 3,               /* i64: N, the element count the mean divides by */
    NNPLUG_ATTR_PROMOTED_DTYPE = 4,             /* i64, nnplug_dtype: the promoted type of the inputs that
                                                   take part in promotion; an input that does not (the
                                                   with-logits loss's weight and posWeight) is rounded to
                                                   it before it is widened to float32 */
    NNPLUG_ATTR_IGNORE_INDEX = 5,               /* i64: rows whose target equals it are not counted (a
                                                   negative value, in CrossEntropyLoss, ignores nothing) */
    NNPLUG_ATTR_LABEL_SMOOTHING = 6,            /* f64 in [0, 1] */
    NNPLUG_ATTR_LSE_SQUARE_SCALE_FOR_ZLOSS = 7, /* f64 */
    NNPLUG_ATTR_RETURN_ZLOSS = 8,               /* bool */
    NNPLUG_ATTR_BETA = 9,                       /* f32 >= 0: SmoothL1Loss's switch from L2 to L1 */
    NNPLUG_ATTR_LOG_TARGET = 10                 /* bool: KlDiv's target holds log-probabilities */
} nnplug_attr_key;

/* The binary cross-entropy families' names before they took their folders' names,
 * kept so that a plugin's source written with them still compiles. */
#define NNPLUG_OP_BCE_FORWARD NNPLUG_OP_BINARY_CROSS_ENTROPY
#define NNPLUG_OP_BCE_BACKWARD NNPLUG_OP_BINARY_CROSS_ENTROPY_BACKWARD
#define NNPLUG_OP_BCE_WITH_LOGITS NNPLUG_OP_BINARY_CROSS_ENTROPY_WITH_LOGITS
#define NNPLUG_OP_BCE_WITH_LOGITS_BACKWARD NNPLUG_OP_BINARY_CROSS_ENTROPY_WITH_LOGITS_BACKWARD
#define NNPLUG_OP_BCE_WITH_LOGITS_TARGET_BACKWARD NNPLUG_OP_BINARY_CROSS_ENTROPY_WITH_LOGITS_TARGET_BACKWARD
#define NNPLUG_BCE_SELF NNPLUG_BINARY_CROSS_ENTROPY_SELF
#define NNPLUG_BCE_TARGET NNPLUG_BINARY_CROSS_ENTROPY_TARGET
#define NNPLUG_BCE_WEIGHT NNPLUG_BINARY_CROSS_ENTROPY_WEIGHT
#define NNPLUG_BCE_OUT NNPLUG_BINARY_CROSS_ENTROPY_OUT
#define NNPLUG_BCE_OPERANDS NNPLUG_BINARY_CROSS_ENTROPY_OPERANDS
#define NNPLUG_BCE_BACKWARD_GRAD_OUTPUT NNPLUG_BINARY_CROSS_ENTROPY_BACKWARD_GRAD_OUTPUT
#define NNPLUG_BCE_BACKWARD_SELF NNPLUG_BINARY_CROSS_ENTROPY_BACKWARD_SELF
#define NNPLUG_BCE_BACKWARD_TARGET NNPLUG_BINARY_CROSS_ENTROPY_BACKWARD_TARGET
#define NNPLUG_BCE_BACKWARD_WEIGHT NNPLUG_BINARY_CROSS_ENTROPY_BACKWARD_WEIGHT
#define NNPLUG_BCE_BACKWARD_OUT NNPLUG_BINARY_CROSS_ENTROPY_BACKWARD_OUT
#define NNPLUG_BCE_BACKWARD_OPERANDS NNPLUG_BINARY_CROSS_ENTROPY_BACKWARD_OPERANDS
#define NNPLUG_BCE_WITH_LOGITS_SELF NNPLUG_BINARY_CROSS_ENTROPY_WITH_LOGITS_SELF
#define NNPLUG_BCE_WITH_LOGITS_TARGET NNPLUG_BINARY_CROSS_ENTROPY_WITH_LOGITS_TARGET
#define NNPLUG_BCE_WITH_LOGITS_WEIGHT NNPLUG_BINARY_CROSS_ENTROPY_WITH_LOGITS_WEIGHT
#define NNPLUG_BCE_WITH_LOGITS_POS_WEIGHT NNPLUG_BINARY_CROSS_ENTROPY_WITH_LOGITS_POS_WEIGHT
#define NNPLUG_BCE_WITH_LOGITS_OUT NNPLUG_BINARY_CROSS_ENTROPY_WITH_LOGITS_OUT
#define NNPLUG_BCE_WITH_LOGITS_OPERANDS NNPLUG_BINARY_CROSS_ENTROPY_WITH_LOGITS_OPERANDS
#define NNPLUG_BCE_WITH_LOGITS_BACKWARD_GRAD_OUTPUT \
    NNPLUG_BINARY_CROSS_ENTROPY_WITH_LOGITS_BACKWARD_GRAD_OUTPUT
#define NNPLUG_BCE_WITH_LOGITS_BACKWARD_SELF NNPLUG_BINARY_CROSS_ENTROPY_WITH_LOGITS_BACKWARD_SELF
#define NNPLUG_BCE_WITH_LOGITS_BACKWARD_TARGET NNPLUG_BINARY_CROSS_ENTROPY_WITH_LOGITS_BACKWARD_TARGET
#define NNPLUG_BCE_WITH_LOGITS_BACKWARD_WEIGHT NNPLUG_BINARY_CROSS_ENTROPY_WITH_LOGITS_BACKWARD_WEIGHT
#define NNPLUG_BCE_WITH_LOGITS_BACKWARD_POS_WEIGHT NNPLUG_BINARY_CROSS_ENTROPY_WITH_LOGITS_BACKWARD_POS_WEIGHT
#define NNPLUG_BCE_WITH_LOGITS_BACKWARD_OUT NNPLUG_BINARY_CROSS_ENTROPY_WITH_LOGITS_BACKWARD_OUT
#define NNPLUG_BCE_WITH_LOGITS_BACKWARD_OPERANDS NNPLUG_BINARY_CROSS_ENTROPY_WITH_LOGITS_BACKWARD_OPERANDS

#endif /* NNPLUG_OP_SLOTS_H */
