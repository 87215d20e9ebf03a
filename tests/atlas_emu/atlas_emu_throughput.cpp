// Elements per second of atlas_emu and cpu_tbb on 16M float32 elements (backward and
// forward, contiguous, reduction none), best of several runs of each. Prints only:
// timings on a shared machine are no pass/fail criterion.
//   atlas_emu_throughput [elements] [runs]
#include <acl/acl.h>
#include <aclnnop/aclnn_binary_cross_entropy.h>
#include <aclnnop/aclnn_binary_cross_entropy_backward.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>

#include "acl_test_support.h"

namespace {

using nnplug::test::DeviceTensor;

struct Rates {
    double backward = 0;
    double forward = 0;
};

// Best seconds of runs executions of call (each synchronized).
template <typename Call>
double best_seconds(int runs, Call&& call) {
    double best = 1e30;
    for (int run = 0; run < runs; ++run) {
        const auto begin = std::chrono::steady_clock::now();
        if (call() != ACLNN_SUCCESS) {
            std::fprintf(stderr, "run failed: %s\n", aclGetRecentErrMsg());
            std::exit(1);
        }
        best =
            std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count());
    }
    return best;
}

Rates measure(const std::string& backend, int64_t count, int runs) {
    nnplug::test::TempFolder folder;
    const auto config = folder.write("config.yaml", "backend: " + backend + "\n");
    if (aclInit(config.c_str()) != ACL_SUCCESS) {
        std::fprintf(stderr, "aclInit: %s\n", aclGetRecentErrMsg());
        std::exit(1);
    }
    Rates rates;
    {
        std::mt19937 generator(1);
        std::uniform_real_distribution<float> unit(0.01f, 0.99f);
        std::vector<float> self(static_cast<size_t>(count)), target(self.size()), grad(self.size());
        for (size_t i = 0; i < self.size(); ++i) {
            self[i] = unit(generator);
            target[i] = unit(generator);
            grad[i] = unit(generator);
        }
        const std::vector<int64_t> shape = {count};
        DeviceTensor g(grad, shape), s(self, shape), t(target, shape),
            out(std::vector<float>(self.size()), shape);
        rates.backward =
            count / best_seconds(runs, [&] { return nnplug::test::run_backward(g, s, t, nullptr, 0, out); });
        rates.forward =
            count / best_seconds(runs, [&] { return nnplug::test::run_forward(s, t, nullptr, 0, out); });
    }
    aclFinalize();
    return rates;
}

}  // namespace

int main(int argc, char** argv) {
    const int64_t count = argc > 1 ? std::atoll(argv[1]) : int64_t{16} << 20;
    const int runs = argc > 2 ? std::atoi(argv[2]) : 5;
    unsetenv("NNPLUG_BACKEND");
    // Interleaved rounds: the machine's bandwidth drifts, so each backend gets its best.
    Rates cpu, emu;
    for (int round = 0; round < 2; ++round) {
        const Rates c = measure("cpu_tbb", count, runs), e = measure("atlas_emu", count, runs);
        cpu.backward = std::max(cpu.backward, c.backward);
        cpu.forward = std::max(cpu.forward, c.forward);
        emu.backward = std::max(emu.backward, e.backward);
        emu.forward = std::max(emu.forward, e.forward);
    }
    std::printf("%lld float32 elements, best of %d runs x 2 rounds, elements/s\n",
                static_cast<long long>(count), runs);
    std::printf("backward  cpu_tbb %.3e  atlas_emu %.3e  ratio %.1f%%\n", cpu.backward, emu.backward,
                100.0 * emu.backward / cpu.backward);
    std::printf("forward   cpu_tbb %.3e  atlas_emu %.3e  ratio %.1f%%\n", cpu.forward, emu.forward,
                100.0 * emu.forward / cpu.forward);
    return 0;
}
