# scalar_ref variants the kit must fail on CrossEntropyLoss (nnplug_kit_mutant,
# tests/conformance_kit): label smoothing spread over C - 1 classes, and the log-sum-exp
# without its running max (logits near 100 overflow).
nnplug_kit_mutant(smoothing_count SCALAR_REF_BUG_SMOOTHING_COUNT
    "FAIL (golden|random) aclnnCrossEntropyLoss(Grad)? [A-Za-z0-9_.-]*(smoothing|ls0)[A-Za-z0-9_.-]*: ")
nnplug_kit_mutant(no_max_in_lse SCALAR_REF_BUG_NO_MAX_IN_LSE
    "FAIL random aclnnCrossEntropyLoss [A-Za-z0-9_.-]+: (lossOut|logProbOut) element [0-9]+ is -?(nan|inf)")
