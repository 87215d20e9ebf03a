// aclnnKlDiv and its two gradients against the memory bandwidth: in one process, for each dtype
// and size (16M and 64M elements by default), a STREAM triad over the same element count on the
// same threads and nnplug's two-phase call on device memory, interleaved, best of several
// repetitions; prints GB/s and the ratio nnplug/triad (bytes counted as the BCE comparison
// counts them: each input the op reads once, out written once, one element for a reduced loss;
// the self gradient reads gradOutput and target only). Never asserts on time.
#include <acl/acl.h>
#include <aclnnop/aclnn_kl_div.h>
#include <aclnnop/aclnn_kl_div_backward.h>
#include <aclnnop/aclnn_kl_div_target_backward.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <exception>
#include <string>
#include <thread>
#include <vector>

#include "side_by_side.h"

namespace {

using nnplug::bench::seconds_per_call;

size_t dtype_bytes(aclDataType dtype) {
    return dtype == ACL_FLOAT ? 4 : 2;
}

// A contiguous 1-d device tensor of n elements of dtype, filled with a byte pattern that is
// a finite value in every float dtype.
struct Buffer {
    void* data = nullptr;
    aclTensor* tensor = nullptr;
    Buffer(int64_t n, aclDataType dtype, std::vector<int64_t> shape) {
        const size_t bytes = std::max<size_t>(4, static_cast<size_t>(n) * dtype_bytes(dtype));
        aclrtMalloc(&data, bytes, ACL_MEM_MALLOC_HUGE_FIRST);
        aclrtMemset(data, bytes, 0x3c, bytes);
        std::vector<int64_t> strides(shape.size(), 1);
        tensor = aclCreateTensor(shape.data(), shape.size(), dtype, strides.data(), 0, ACL_FORMAT_ND,
                                 shape.data(), shape.size(), data);
    }
    ~Buffer() {
        aclDestroyTensor(tensor);
        aclrtFree(data);
    }
};

// Which of the three ops a call makes.
enum class Kind { kLoss, kSelfGradient, kTargetGradient };

// One op call as a CANN program makes it: first phase, workspace, run, synchronize.
struct KlDivCall {
    Kind kind;
    int64_t reduction;
    aclDataType dtype;
    int64_t n;
    Buffer grad{1, dtype, {}}, self{n, dtype, {n}}, target{n, dtype, {n}};
    Buffer out;
    void* workspace = nullptr;
    uint64_t capacity = 0;

    KlDivCall(Kind k, int64_t r, aclDataType d, int64_t count)
        : kind(k),
          reduction(r),
          dtype(d),
          n(count),
          out(k != Kind::kLoss || r == 0 ? count : 1, d,
              k != Kind::kLoss || r == 0 ? std::vector<int64_t>{count} : std::vector<int64_t>{}) {}
    ~KlDivCall() {
        if (workspace != nullptr) aclrtFree(workspace);
    }
    int first(uint64_t* size, aclOpExecutor** executor) const {
        switch (kind) {
            case Kind::kLoss:
                return aclnnKlDivGetWorkspaceSize(self.tensor, target.tensor, reduction, false, out.tensor,
                                                  size, executor);
            case Kind::kSelfGradient:
                return aclnnKlDivBackwardGetWorkspaceSize(grad.tensor, self.tensor, target.tensor, reduction,
                                                          false, out.tensor, size, executor);
            default:
                return aclnnKlDivTargetBackwardGetWorkspaceSize(grad.tensor, self.tensor, target.tensor,
                                                                reduction, false, out.tensor, size, executor);
        }
    }
    int call() {
        uint64_t size = 0;
        aclOpExecutor* executor = nullptr;
        if (const int status = first(&size, &executor)) return status;
        if (size > capacity) {
            if (workspace != nullptr) aclrtFree(workspace);
            aclrtMalloc(&workspace, size, ACL_MEM_MALLOC_HUGE_FIRST);
            capacity = size;
        }
        const int run = kind == Kind::kLoss ? aclnnKlDiv(workspace, size, executor, nullptr)
                        : kind == Kind::kSelfGradient
                            ? aclnnKlDivBackward(workspace, size, executor, nullptr)
                            : aclnnKlDivTargetBackward(workspace, size, executor, nullptr);
        return run != 0 ? run : aclrtSynchronizeStream(nullptr);
    }
    int64_t bytes() const {
        const int64_t element = static_cast<int64_t>(dtype_bytes(dtype));
        const int64_t written = kind != Kind::kLoss || reduction == 0 ? n : 1;
        const int64_t read = kind == Kind::kLoss ? 2 * n : kind == Kind::kSelfGradient ? n + 1 : 2 * n + 1;
        return (read + written) * element;
    }
    const char* name() const {
        if (kind == Kind::kSelfGradient) return "aclnnKlDivBackward none";
        if (kind == Kind::kTargetGradient) return "aclnnKlDivTargetBackward none";
        return reduction == 3 ? "aclnnKlDiv batchmean" : "aclnnKlDiv none";
    }
};

int run_main(int argc, char** argv) {
    CLI::App app{"aclnnKlDiv and its gradients against the memory bandwidth (triad), side by side"};
    int threads = 0, reps = 5;
    std::vector<int64_t> sizes{16 << 20, 64 << 20};
    app.add_option("--threads", threads, "threads of the triad; the backend uses its config (0: every core)");
    app.add_option("--reps", reps, "repetitions; the best of each side counts");
    app.add_option("--sizes", sizes, "element counts");
    CLI11_PARSE(app, argc, argv);
    if (threads <= 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    if (aclInit(nullptr) != ACL_SUCCESS || aclrtSetDevice(0) != ACL_SUCCESS) {
        std::fprintf(stderr, "aclInit: %s\n", aclGetRecentErrMsg());
        return 2;
    }
    std::printf("%-32s %-9s %10s %12s %11s %11s %12s\n", "op", "dtype", "elements", "us/call", "GB/s",
                "triad GB/s", "nnplug/triad");
    for (const int64_t n : sizes) {
        nnplug::bench::ParallelTriad triad(threads, n);
        for (const aclDataType dtype : {ACL_FLOAT, ACL_FLOAT16, ACL_BF16}) {
            for (const auto& [kind, reduction] :
                 {std::pair{Kind::kLoss, 0}, std::pair{Kind::kLoss, 3}, std::pair{Kind::kSelfGradient, 0},
                  std::pair{Kind::kTargetGradient, 0}}) {
                KlDivCall call(kind, reduction, dtype, n);
                if (const int status = call.call()) {
                    std::printf("call failed: %d %s\n", status, aclGetRecentErrMsg());
                    return 1;
                }
                double best = 1e30, best_triad = 1e30;
                for (int rep = 0; rep < reps; ++rep) {
                    best_triad = std::min(best_triad, seconds_per_call([&] { triad.run(); }, 0.05));
                    best = std::min(best, seconds_per_call([&] { call.call(); }, 0.05));
                }
                const double gbs = static_cast<double>(call.bytes()) / best * 1e-9;
                const double triad_gbs = triad.bytes_per_second(best_triad) * 1e-9;
                const std::string op = call.name();
                std::printf("%-32s %-9s %10lld %12.2f %11.2f %11.2f %12.2f\n", op.c_str(),
                            dtype == ACL_FLOAT     ? "float32"
                            : dtype == ACL_FLOAT16 ? "float16"
                                                   : "bfloat16",
                            static_cast<long long>(n), best * 1e6, gbs, triad_gbs, gbs / triad_gbs);
            }
        }
    }
    aclFinalize();
    return 0;
}

}  // namespace

// No exception leaves main: one that escapes the run (an allocation that fails, say) ends
// the program with its text.
int main(int argc, char** argv) {
    try {
        return run_main(argc, argv);
    } catch (const std::exception& error) {
        std::fprintf(stderr, "nnplug_compare_kl_div: %s\n", error.what());
    } catch (...) {
        std::fprintf(stderr, "nnplug_compare_kl_div: an unknown exception\n");
    }
    return 1;
}
