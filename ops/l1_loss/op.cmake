nnplug_add_op(l1_loss SOURCES l1_loss_ops.cpp)
