# The quadratic branch taken at |self - target| == beta (z <= beta in the loss, |x| <= beta in
# the gradient) where PyTorch takes the linear one: caught where the two branches round apart
# and at beta 0 with self == target (0 / 0 is NaN).
nnplug_kit_mutant(smooth_l1_boundary SCALAR_REF_BUG_SMOOTH_L1_BOUNDARY
                  "FAIL (golden|random) aclnnSmoothL1Loss(Backward)? [A-Za-z0-9_.-]+: ")
