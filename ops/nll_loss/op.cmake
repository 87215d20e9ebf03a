nnplug_add_op(nll_loss SOURCES nll_loss_ops.cpp)
