// A seeded random stream whose draws are defined here, not by the standard library's
// distributions (whose algorithms differ between implementations), and whose state can
// be saved in a checkpoint.
#pragma once

#include <cmath>
#include <cstddef>
#include <cstdint>
#include <random>
#include <sstream>
#include <string>

namespace train {

// Uniform integer in [0, bound) from a source of uniform 64-bit words, without modulo bias
// (Lemire's method).
template <typename NextWord>
uint64_t uniform_below(uint64_t bound, NextWord&& next) {
    unsigned __int128 product = static_cast<unsigned __int128>(next()) * bound;
    auto low = static_cast<uint64_t>(product);
    if (low < bound) {
        const uint64_t threshold = (0 - bound) % bound;
        while (low < threshold) {
            product = static_cast<unsigned __int128>(next()) * bound;
            low = static_cast<uint64_t>(product);
        }
    }
    return static_cast<uint64_t>(product >> 64);
}

class RandomStream {
public:
    explicit RandomStream(uint64_t seed) : engine_(seed) {}

    uint64_t next() { return engine_(); }
    // Uniform in [0, 1) with 24 random bits, exact in float.
    float uniform() { return static_cast<float>(next() >> 40) * (1.0f / 16777216.0f); }
    // Uniform integer in [0, bound).
    uint64_t below(uint64_t bound) {
        return uniform_below(bound, [this] { return next(); });
    }
    // Standard normal by Box-Muller in double, one value per call.
    double normal() {
        const double u1 = (static_cast<double>(next() >> 11) + 1.0) * (1.0 / 9007199254740992.0);
        const double u2 = static_cast<double>(next() >> 11) * (1.0 / 9007199254740992.0);
        return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
    }
    template <typename Index>
    void shuffle(Index* items, size_t count) {
        for (size_t i = count; i > 1; --i) std::swap(items[i - 1], items[below(i)]);
    }

    std::string state() const {
        std::ostringstream out;
        out << engine_;
        return out.str();
    }
    // Whether text is a state as state() writes it: the engine's 312 words and its position
    // (0 to 312) in decimal, separated by single spaces, and not the all-zero state, whose
    // draws are all 0 (below() would never return). Checked before restoring, since a
    // checkpoint's text may come from anywhere.
    static bool is_state(const std::string& text) {
        constexpr size_t kWords = std::mt19937_64::state_size;
        constexpr uint64_t kUpperMask = ~((uint64_t{1} << std::mt19937_64::mask_bits) - 1);
        uint64_t words[kWords + 1];
        size_t count = 0, at = 0;
        while (true) {
            uint64_t value = 0;
            const size_t start = at;
            for (; at < text.size() && text[at] >= '0' && text[at] <= '9'; ++at) {
                const auto digit = static_cast<uint64_t>(text[at] - '0');
                if (value > (UINT64_MAX - digit) / 10) return false;
                value = value * 10 + digit;
            }
            if (at == start || count == kWords + 1) return false;
            words[count++] = value;
            if (at == text.size()) break;
            if (text[at++] != ' ') return false;
        }
        if (count != kWords + 1 || words[kWords] > kWords) return false;
        if ((words[0] & kUpperMask) != 0) return true;
        for (size_t i = 1; i < kWords; ++i)
            if (words[i] != 0) return true;
        return false;
    }
    bool restore(const std::string& text) {
        if (!is_state(text)) return false;
        std::istringstream in(text);
        std::mt19937_64 engine;
        in >> engine;
        if (in.fail()) return false;
        engine_ = engine;
        return true;
    }

private:
    std::mt19937_64 engine_;  // its output sequence is fixed by the C++ standard
};

}  // namespace train
