/* The header's name before the family took its folder's name, kept so that a plugin's
 * source that includes it still compiles. */
#ifndef NNPLUG_OPS_BCE_WITH_LOGITS_MATH_H
#define NNPLUG_OPS_BCE_WITH_LOGITS_MATH_H

#include <nnplug/ops/binary_cross_entropy_with_logits_math.h>

#endif
