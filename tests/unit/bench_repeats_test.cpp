// Repeats (bench/repeats.h): the best repetition, and the gap to the next best that marks a
// benchmark ratio as unsteady.
#include <gtest/gtest.h>

#include <cmath>

#include "repeats.h"

namespace nnplug::bench {
namespace {

TEST(BenchRepeats, BestIsTheFastestWhateverTheOrder) {
    Repeats runs;
    for (double t : {3.0, 1.0, 2.0, 1.5}) runs.add(t);
    EXPECT_EQ(runs.best(), 1.0);
    EXPECT_EQ(runs.count(), 4u);
}

TEST(BenchRepeats, SpreadIsTheGapBetweenTheTwoFastest) {
    Repeats runs;
    for (double t : {9.0, 1.25, 1.0, 5.0}) runs.add(t);
    // A slow outlier (9.0) does not make the best untrustworthy; the runner-up does.
    EXPECT_DOUBLE_EQ(runs.spread(), 0.25);
    EXPECT_TRUE(runs.steady(0.25));
    EXPECT_FALSE(runs.steady(0.2));
}

TEST(BenchRepeats, TwoEqualFastestAreSteadyDespiteSlowOnes) {
    Repeats runs;
    for (double t : {4.0, 2.0, 2.0, 8.0}) runs.add(t);
    EXPECT_EQ(runs.spread(), 0.0);
    EXPECT_TRUE(runs.steady(0.0));
}

TEST(BenchRepeats, OneRepetitionCannotShowItsSpread) {
    Repeats runs;
    EXPECT_TRUE(std::isnan(runs.best()));
    runs.add(1.0);
    EXPECT_TRUE(std::isnan(runs.spread()));
    EXPECT_FALSE(runs.steady(1e9));
}

}  // namespace
}  // namespace nnplug::bench
