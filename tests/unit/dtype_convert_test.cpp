// The SDK's float16/bfloat16 conversions: round to nearest even, specials kept.
#include <gtest/gtest.h>
#include <nnplug/dtype_convert.h>

#include <cmath>
#include <limits>

namespace {

TEST(Float16, RoundTripsEveryValue) {
    for (uint32_t bits = 0; bits < 0x10000; ++bits) {
        const auto half = static_cast<uint16_t>(bits);
        const float value = nnplug::f16_to_f32(half);
        if (std::isnan(value)) {
            EXPECT_TRUE(std::isnan(nnplug::f16_to_f32(nnplug::f32_to_f16(value))));
        } else {
            EXPECT_EQ(nnplug::f32_to_f16(value), half) << bits;
        }
    }
}

TEST(Float16, RoundsHalfwayToEven) {
    // 1 + 2^-11 is halfway between 1 and 1 + 2^-10: even mantissa (1) wins.
    EXPECT_EQ(nnplug::f32_to_f16(1.0f + 0x1p-11f), 0x3c00);
    EXPECT_EQ(nnplug::f32_to_f16(1.0f + 3 * 0x1p-11f), 0x3c02);
    EXPECT_EQ(nnplug::f32_to_f16(65520.0f), 0x7c00) << "rounds to infinity";
    EXPECT_EQ(nnplug::f32_to_f16(65519.0f), 0x7bff);
    EXPECT_EQ(nnplug::f32_to_f16(0x1p-25f), 0x0000) << "halfway to the smallest subnormal rounds to even 0";
    EXPECT_EQ(nnplug::f32_to_f16(0x1.8p-25f), 0x0001);
    EXPECT_EQ(nnplug::f32_to_f16(-0.0f), 0x8000);
}

TEST(BFloat16, RoundsToNearestEvenAndKeepsNanQuiet) {
    EXPECT_EQ(nnplug::f32_to_bf16(nnplug::bits_float(0x3f808000u)), 0x3f80) << "halfway, even stays";
    EXPECT_EQ(nnplug::f32_to_bf16(nnplug::bits_float(0x3f818000u)), 0x3f82) << "halfway, odd rounds up";
    EXPECT_EQ(nnplug::f32_to_bf16(nnplug::bits_float(0x3f808001u)), 0x3f81);
    const uint16_t nan = nnplug::f32_to_bf16(nnplug::bits_float(0x7f800001u));
    EXPECT_TRUE(std::isnan(nnplug::bf16_to_f32(nan)));
    EXPECT_EQ(nnplug::f32_to_bf16(std::numeric_limits<float>::infinity()), 0x7f80);
    EXPECT_EQ(nnplug::bf16_to_f32(0x3f80), 1.0f);
}

}  // namespace
