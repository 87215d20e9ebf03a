#!/usr/bin/env python3
"""Expected outputs of the CANN-style with-logits samples, in float64 from the ops' math.

The samples share their inputs: logits x and targets y of 2 samples x 3 classes, a weight w
per element, a posWeight p per class (broadcast over the samples), gradOutput g = 1 and
reduction none. This prints each sample's values as "%f" prints them (six decimals); the
ctests in examples/CMakeLists.txt compare the programs' output with these, allowing one
unit of the last printed digit for float32 rounding.

    loss          w * [(1 - y) x - (1 + (p - 1) y) log sigmoid(x)]
    d/d logits    g w [sigmoid(x) (1 + (p - 1) y) - p y]
    d/d target    g w [-x - (p - 1) log sigmoid(x)]
"""
import math

X = [-2.0, -0.5, 0.0, 0.5, 1.5, 3.0]
Y = [0.0, 1.0, 0.25, 1.0, 1.0, 0.0]
W = [1.0, 1.0, 1.0, 0.5, 0.5, 0.5]
P = [1.0, 2.0, 3.0]
G = [1.0] * 6


def log_sigmoid(z):
    return min(z, 0.0) - math.log1p(math.exp(-abs(z)))


def sigmoid(z):
    return 1.0 / (1.0 + math.exp(-z))


def loss(x, y, w, p, g):
    return w * ((1 - y) * x - (1 + (p - 1) * y) * log_sigmoid(x))


def grad_logits(x, y, w, p, g):
    return g * w * (sigmoid(x) * (1 + (p - 1) * y) - p * y)


def grad_target(x, y, w, p, g):
    return g * w * (-x - (p - 1) * log_sigmoid(x))


for name, formula in (("aclnn_binary_cross_entropy_with_logits", loss),
                      ("aclnn_binary_cross_entropy_with_logits_backward", grad_logits),
                      ("aclnn_binary_cross_entropy_with_logits_target_backward", grad_target)):
    values = [formula(X[i], Y[i], W[i], P[i % 3], G[i]) for i in range(6)]
    print(f"{name}: {','.join('%f' % v for v in values)}")
