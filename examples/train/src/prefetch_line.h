// A software prefetch of one cache line, for loops over scattered rows.
#pragma once

namespace train {

// GCC deletes a loop of nothing but __builtin_prefetch (a row's lines), so on x86 the
// instruction is written out.
inline void prefetch_line(const char* address) {
#if defined(__x86_64__) || defined(__i386__)
    asm volatile("prefetcht0 %0" : : "m"(*address));
#else
    __builtin_prefetch(address);
#endif
}

}  // namespace train
