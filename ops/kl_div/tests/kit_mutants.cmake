# scalar_ref variants the kit must fail on the KL divergence ops (nnplug_kit_mutant,
# tests/conformance_kit): batchmean divided by the element count instead of self's first
# dimension, in the loss and both gradients; logTarget ignored (the target always read as
# probabilities).
nnplug_kit_mutant(batchmean_numel SCALAR_REF_BUG_BATCHMEAN_NUMEL
    "FAIL (golden|random) aclnnKlDiv(Backward|TargetBackward)? [A-Za-z0-9_.-]+: ")
nnplug_kit_mutant(log_target_ignored SCALAR_REF_BUG_LOG_TARGET_IGNORED
    "FAIL (golden|random) aclnnKlDiv(Backward|TargetBackward)? [A-Za-z0-9_.-]+: ")
