# scalar_ref variants the kit must fail on the NLL ops (nnplug_kit_mutant, tests/conformance_kit):
# ignored rows counted in the mean's divisor, the divisor a count of rows instead of their
# weights, an out-of-range class read instead of refused, int32 targets read as int64.
nnplug_kit_mutant(ignored_in_divisor SCALAR_REF_BUG_IGNORED_IN_DIVISOR
    "FAIL (golden|random) aclnn(NLLLoss|NLLLoss2d|CrossEntropyLoss)(Grad)? [A-Za-z0-9_.-]+: ")
nnplug_kit_mutant(unweighted_divisor SCALAR_REF_BUG_UNWEIGHTED_DIVISOR
    "FAIL (golden|random) aclnn(NLLLoss|NLLLoss2d|CrossEntropyLoss)(Grad)? [A-Za-z0-9_.-]+: ")
nnplug_kit_mutant(read_out_of_range SCALAR_REF_BUG_READ_OUT_OF_RANGE
    "FAIL errors aclnn[A-Za-z0-9]+ target_[A-Za-z0-9_-]+: the call succeeded")
nnplug_kit_mutant(int32_as_int64 SCALAR_REF_BUG_INT32_AS_INT64
    "FAIL (golden|random) aclnn[A-Za-z0-9]+ [A-Za-z0-9_.-]*(i32|ignore1)[A-Za-z0-9_.-]*: ")
