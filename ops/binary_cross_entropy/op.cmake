nnplug_add_op(binary_cross_entropy SOURCES bce_ops.cpp)
