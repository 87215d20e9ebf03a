# The L1 gradient at self == target taken as +gradOutput (sign from x >= y) instead of 0:
# caught by the golden cases with equal values and the kit's random cases that hold ties.
nnplug_kit_mutant(l1_sign_at_equal SCALAR_REF_BUG_L1_SIGN_AT_EQUAL
                  "FAIL (golden|random) aclnnL1LossBackward [A-Za-z0-9_.-]+: ")
