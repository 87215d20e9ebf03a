nnplug_add_op(mse_loss SOURCES mse_loss_ops.cpp)
