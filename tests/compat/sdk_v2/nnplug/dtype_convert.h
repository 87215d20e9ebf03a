/*
 * Scalar float16 / bfloat16 <-> float32 conversions with round-to-nearest-even,
 * for plugins and tests. Bit manipulation only, so the result does not depend on
 * the compiler, the CPU's F16C support or the SIMD library in use.
 */
#ifndef NNPLUG_DTYPE_CONVERT_H
#define NNPLUG_DTYPE_CONVERT_H

#include <stdint.h>
#include <string.h>

#include "nnplug/plugin.h"

#ifdef __cplusplus
namespace nnplug {

inline uint32_t float_bits(float f) {
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

inline float bits_float(uint32_t u) {
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

inline float f16_to_f32(uint16_t h) {
    const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
    const uint32_t exponent = (h >> 10) & 0x1fu;
    const uint32_t mantissa = h & 0x3ffu;
    if (exponent == 0x1f) return bits_float(sign | 0x7f800000u | (mantissa << 13));
    if (exponent == 0) {
        const float magnitude = static_cast<float>(mantissa) * 0x1p-24f;  // exact
        return sign ? -magnitude : magnitude;
    }
    return bits_float(sign | ((exponent + 112u) << 23) | (mantissa << 13));
}

inline uint16_t f32_to_f16(float f) {
    uint32_t x = float_bits(f);
    const uint32_t sign = (x >> 16) & 0x8000u;
    uint32_t magnitude = x & 0x7fffffffu;
    if (magnitude >= 0x7f800000u) {  // inf stays inf, NaN stays a quiet NaN
        const uint32_t nan_bits = magnitude > 0x7f800000u ? 0x200u | ((magnitude >> 13) & 0x3ffu) : 0u;
        return static_cast<uint16_t>(sign | 0x7c00u | nan_bits);
    }
    if (magnitude >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // rounds to inf
    if (magnitude < 0x38800000u) {
        // Below 2^-14 the result is subnormal: adding 0.5 lines the float's last
        // mantissa bit up with float16's 2^-24 unit, so the FPU rounds to nearest even.
        const float aligned = bits_float(magnitude) + 0.5f;
        return static_cast<uint16_t>(sign | (float_bits(aligned) - 0x3f000000u));
    }
    const uint32_t odd = (magnitude >> 13) & 1u;
    magnitude += 0xc8000fffu + odd;  // rebias the exponent by -112 and round to nearest even
    return static_cast<uint16_t>(sign | (magnitude >> 13));
}

inline float bf16_to_f32(uint16_t b) {
    return bits_float(static_cast<uint32_t>(b) << 16);
}

inline uint16_t f32_to_bf16(float f) {
    const uint32_t x = float_bits(f);
    if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);  // quiet NaN
    const uint32_t rounding = 0x7fffu + ((x >> 16) & 1u);
    return static_cast<uint16_t>((x + rounding) >> 16);
}

/* Reads element i of a buffer of the given nnplug_dtype as float32. */
inline float load_as_f32(const void* base, int32_t dtype, int64_t i) {
    switch (dtype) {
        case NNPLUG_DTYPE_F16:
            return f16_to_f32(static_cast<const uint16_t*>(base)[i]);
        case NNPLUG_DTYPE_BF16:
            return bf16_to_f32(static_cast<const uint16_t*>(base)[i]);
        default:
            return static_cast<const float*>(base)[i];
    }
}

/* Writes a float32 into element i of a buffer of the given dtype, rounding to nearest even. */
inline void store_from_f32(void* base, int32_t dtype, int64_t i, float v) {
    switch (dtype) {
        case NNPLUG_DTYPE_F16:
            static_cast<uint16_t*>(base)[i] = f32_to_f16(v);
            break;
        case NNPLUG_DTYPE_BF16:
            static_cast<uint16_t*>(base)[i] = f32_to_bf16(v);
            break;
        default:
            static_cast<float*>(base)[i] = v;
            break;
    }
}

}  // namespace nnplug
#endif /* __cplusplus */

#endif /* NNPLUG_DTYPE_CONVERT_H */
