# scalar_ref variants the kit must fail on the soft margin ops (nnplug_kit_mutant,
# tests/conformance_kit): the loss as log(1 + exp(-y x)) instead of log1p, which is 0 for
# margins beyond 16.6 and off by up to an ulp of 1 below them.
nnplug_kit_mutant(soft_margin_log SCALAR_REF_BUG_SOFT_MARGIN_LOG
    "FAIL (golden|random) aclnnSoftMarginLoss [A-Za-z0-9_.-]+: ")
