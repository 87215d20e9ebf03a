// Fresh output tensors whose memory may be a recently freed block: a large gradient or
// unreduced loss is written once per call, and a block just returned by the allocator costs a
// page fault per 4 KiB page on its first write (64 MiB: about 17 ms, longer than the op).
// Blocks of at least kLeastCachedBytes go back to a bounded cache when their tensor dies
// and serve the next request of about their size, their pages already mapped.
#pragma once

#include <ATen/ATen.h>

#include <cstddef>

namespace nnplug::torch_ops {

inline constexpr size_t kLeastCachedBytes = size_t{1} << 20;
inline constexpr size_t kMostCachedBytes = size_t{1} << 30;  // all blocks held at once

// at::empty(shape, dtype), its memory from the cache when it is large.
at::Tensor empty_output(at::IntArrayRef shape, at::ScalarType dtype);

// The bytes the cache holds now (for tests).
size_t cached_bytes();

}  // namespace nnplug::torch_ops
