#include "loss_compare.h"

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <exception>
#include <thread>

#include "side_by_side.h"

namespace nnplug::bench {
namespace {

size_t dtype_bytes(aclDataType dtype) {
    return dtype == ACL_FLOAT ? 4 : 2;
}

// A contiguous device tensor of n elements of dtype, filled with a byte pattern that is a
// finite value in every float dtype.
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
    Buffer(const Buffer&) = delete;
    Buffer& operator=(const Buffer&) = delete;
};

// One op call as a CANN program makes it: first phase, workspace, run, synchronize.
class LossCall {
public:
    LossCall(const LossCase& c, aclDataType dtype, int64_t n)
        : case_(c),
          dtype_(dtype),
          n_(n),
          grad_(1, dtype, {}),
          self_(n, dtype, {n}),
          target_(n, dtype, {n}),
          out_(c.unreduced ? n : 1, dtype, c.unreduced ? std::vector<int64_t>{n} : std::vector<int64_t>{}) {}
    ~LossCall() {
        if (workspace_ != nullptr) aclrtFree(workspace_);
    }
    LossCall(const LossCall&) = delete;
    LossCall& operator=(const LossCall&) = delete;

    int call() {
        uint64_t size = 0;
        aclOpExecutor* executor = nullptr;
        if (const int status =
                case_.first({grad_.tensor, self_.tensor, target_.tensor, out_.tensor}, &size, &executor))
            return status;
        if (size > capacity_) {
            if (workspace_ != nullptr) aclrtFree(workspace_);
            aclrtMalloc(&workspace_, size, ACL_MEM_MALLOC_HUGE_FIRST);
            capacity_ = size;
        }
        const int run = case_.second(workspace_, size, executor, nullptr);
        return run != 0 ? run : aclrtSynchronizeStream(nullptr);
    }
    int64_t bytes() const {
        const int64_t read = case_.arrays_read * n_ + (case_.reads_gradient ? 1 : 0);
        return (read + (case_.unreduced ? n_ : 1)) * static_cast<int64_t>(dtype_bytes(dtype_));
    }

private:
    const LossCase& case_;
    aclDataType dtype_;
    int64_t n_;
    Buffer grad_, self_, target_, out_;
    void* workspace_ = nullptr;
    uint64_t capacity_ = 0;
};

const char* dtype_name(aclDataType dtype) {
    return dtype == ACL_FLOAT ? "float32" : dtype == ACL_FLOAT16 ? "float16" : "bfloat16";
}

int run(int argc, char** argv, const std::string& title, std::vector<int64_t> sizes,
        const std::vector<LossCase>& cases) {
    CLI::App app{title};
    int threads = 0, reps = 5;
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
        ParallelTriad triad(threads, n);
        for (const aclDataType dtype : {ACL_FLOAT, ACL_FLOAT16, ACL_BF16}) {
            for (const LossCase& c : cases) {
                LossCall call(c, dtype, n);
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
                std::printf("%-32s %-9s %10lld %12.2f %11.2f %11.2f %12.2f\n", c.name.c_str(),
                            dtype_name(dtype), static_cast<long long>(n), best * 1e6, gbs, triad_gbs,
                            gbs / triad_gbs);
            }
        }
    }
    aclFinalize();
    return 0;
}

}  // namespace

// No exception leaves it: one that escapes the run (an allocation that fails, say) ends
// the program with its text.
int compare_losses(int argc, char** argv, const std::string& program, const std::string& title,
                   const std::vector<int64_t>& sizes, const std::vector<LossCase>& cases) {
    try {
        return run(argc, argv, title, sizes, cases);
    } catch (const std::exception& error) {
        std::fprintf(stderr, "%s: %s\n", program.c_str(), error.what());
    } catch (...) {
        std::fprintf(stderr, "%s: an unknown exception\n", program.c_str());
    }
    return 1;
}

}  // namespace nnplug::bench
