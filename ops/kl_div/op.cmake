nnplug_add_op(kl_div SOURCES kl_div_ops.cpp)
