// aclnnCrossEntropyLoss forward plus aclnnCrossEntropyLossGrad, the step a training loop runs,
// against PyTorch's cross_entropy forward and backward on the same data and against the
// memory bandwidth, in one process: for each shape and dtype, the STREAM triad on the same
// threads, nnplug's two two-phase calls on device memory (reduction mean, no weight) and
// libtorch's step, interleaved, best of several repetitions. The bound counts the four passes
// the two ops must make: read the logits, write logProb, read logProb, write the gradient.
// Never asserts on time.
#include <acl/acl.h>
#include <aclnnop/aclnn_cross_entropy_loss.h>
#include <aclnnop/aclnn_cross_entropy_loss_grad.h>
#include <nnplug/dtype_convert.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <exception>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "side_by_side.h"
#include "torch_bce.h"
#include "torch_cross_entropy.h"

namespace {

using nnplug::bench::seconds_per_call;

// A device tensor of shape, holding bytes (or zeros when bytes is empty).
struct DeviceTensor {
    void* data = nullptr;
    aclTensor* tensor = nullptr;
    DeviceTensor(std::vector<int64_t> shape, aclDataType dtype, size_t element,
                 const std::vector<uint8_t>& bytes) {
        int64_t n = 1;
        for (const int64_t d : shape) n *= d;
        const size_t size = std::max<size_t>(1, static_cast<size_t>(n) * element);
        aclrtMalloc(&data, size, ACL_MEM_MALLOC_HUGE_FIRST);
        if (bytes.empty())
            aclrtMemset(data, size, 0, size);
        else
            aclrtMemcpy(data, size, bytes.data(), bytes.size(), ACL_MEMCPY_HOST_TO_DEVICE);
        std::vector<int64_t> strides(shape.size(), 1);
        for (int64_t k = static_cast<int64_t>(shape.size()) - 2; k >= 0; --k)
            strides[static_cast<size_t>(k)] =
                strides[static_cast<size_t>(k) + 1] * shape[static_cast<size_t>(k) + 1];
        tensor = aclCreateTensor(shape.data(), shape.size(), dtype, strides.data(), 0, ACL_FORMAT_ND,
                                 shape.data(), shape.size(), data);
    }
    ~DeviceTensor() {
        aclDestroyTensor(tensor);
        aclrtFree(data);
    }
};

// values as float32 or bfloat16 bytes (the SDK's rounding to nearest even).
std::vector<uint8_t> encoded(const std::vector<float>& values, aclDataType dtype) {
    const size_t element = dtype == ACL_FLOAT ? 4 : 2;
    std::vector<uint8_t> bytes(values.size() * element);
    for (size_t i = 0; i < values.size(); ++i) {
        if (dtype == ACL_FLOAT) {
            std::memcpy(&bytes[i * 4], &values[i], 4);
        } else {
            const uint16_t bits = nnplug::f32_to_bf16(values[i]);
            std::memcpy(&bytes[i * 2], &bits, 2);
        }
    }
    return bytes;
}

// The training step as a CANN program makes it: two first phases, runs, one synchronize.
struct CrossEntropyStep {
    int64_t rows, classes;
    aclDataType dtype;
    size_t element;
    DeviceTensor input, target, loss, log_prob, zloss, lse, grad_loss, grad;
    void* workspace = nullptr;
    uint64_t capacity = 0;

    CrossEntropyStep(int64_t n, int64_t c, aclDataType d, const std::vector<float>& logits,
                     const std::vector<int64_t>& classes_of)
        : rows(n),
          classes(c),
          dtype(d),
          element(d == ACL_FLOAT ? 4 : 2),
          input({n, c}, d, element, encoded(logits, d)),
          target(
              {n}, ACL_INT64, 8,
              std::vector<uint8_t>(reinterpret_cast<const uint8_t*>(classes_of.data()),
                                   reinterpret_cast<const uint8_t*>(classes_of.data() + classes_of.size()))),
          loss({1}, d, element, {}),
          log_prob({n, c}, d, element, {}),
          zloss({1}, d, element, {}),
          lse({n}, d, element, {}),
          grad_loss({}, d, element, encoded({1.0f}, d)),
          grad({n, c}, d, element, {}) {}
    ~CrossEntropyStep() {
        if (workspace != nullptr) aclrtFree(workspace);
    }
    int run_one(aclnnStatus first, uint64_t size, aclOpExecutor* executor,
                aclnnStatus (*second)(void*, uint64_t, aclOpExecutor*, aclrtStream)) {
        if (first != 0) return first;
        if (size > capacity) {
            if (workspace != nullptr) aclrtFree(workspace);
            aclrtMalloc(&workspace, size, ACL_MEM_MALLOC_HUGE_FIRST);
            capacity = size;
        }
        return second(workspace, size, executor, nullptr);
    }
    int call() {
        char mean[] = "mean";
        uint64_t size = 0;
        aclOpExecutor* executor = nullptr;
        const aclnnStatus forward = aclnnCrossEntropyLossGetWorkspaceSize(
            input.tensor, target.tensor, nullptr, mean, -100, 0.0, 0.0, false, loss.tensor, log_prob.tensor,
            zloss.tensor, lse.tensor, &size, &executor);
        int status = run_one(forward, size, executor, aclnnCrossEntropyLoss);
        if (status != 0) return status;
        const aclnnStatus backward = aclnnCrossEntropyLossGradGetWorkspaceSize(
            grad_loss.tensor, log_prob.tensor, target.tensor, nullptr, nullptr, nullptr, mean, -100, 0.0, 0.0,
            grad.tensor, &size, &executor);
        status = run_one(backward, size, executor, aclnnCrossEntropyLossGrad);
        return status != 0 ? status : aclrtSynchronizeStream(nullptr);
    }
    // The four passes: logits read, logProb written and read, the gradient written.
    int64_t bytes() const { return 4 * rows * classes * static_cast<int64_t>(element); }
};

struct Shape {
    int64_t rows, classes;
};

int run_main(int argc, char** argv) {
    CLI::App app{
        "aclnnCrossEntropyLoss + Grad against PyTorch and the memory bandwidth (triad), side by side"};
    int threads = 0, reps = 5;
    std::vector<std::string> shapes{"4096x32000", "65536x10"};
    app.add_option("--threads", threads, "threads of the triad and PyTorch; the backend uses its config");
    app.add_option("--reps", reps, "repetitions; the best of each side counts");
    app.add_option("--shapes", shapes, "rows x classes");
    CLI11_PARSE(app, argc, argv);
    if (threads <= 0) threads = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
    if (aclInit(nullptr) != ACL_SUCCESS || aclrtSetDevice(0) != ACL_SUCCESS) {
        std::fprintf(stderr, "aclInit: %s\n", aclGetRecentErrMsg());
        return 2;
    }
    nnplug::bench::torch_set_threads(threads);
    std::printf("%-12s %-9s %11s %11s %9s %9s %11s %12s\n", "shape", "dtype", "nnplug ms", "torch ms",
                "x torch", "GB/s", "triad GB/s", "of the bound");
    for (const std::string& text : shapes) {
        Shape shape{};
        if (std::sscanf(text.c_str(), "%ldx%ld", &shape.rows, &shape.classes) != 2) return 2;
        std::mt19937 random(1);
        std::uniform_real_distribution<float> logit(-4.0f, 4.0f);
        std::uniform_int_distribution<int64_t> cls(0, shape.classes - 1);
        std::vector<float> logits(static_cast<size_t>(shape.rows * shape.classes));
        for (float& v : logits) v = logit(random);
        std::vector<int64_t> target(static_cast<size_t>(shape.rows));
        for (int64_t& t : target) t = cls(random);
        for (const aclDataType dtype : {ACL_FLOAT, ACL_BF16}) {
            const std::string name = dtype == ACL_FLOAT ? "float32" : "bfloat16";
            CrossEntropyStep step(shape.rows, shape.classes, dtype, logits, target);
            if (const int status = step.call()) {
                std::printf("call failed: %d %s\n", status, aclGetRecentErrMsg());
                return 1;
            }
            std::string why_not;
            auto torch = nnplug::bench::make_torch_cross_entropy(logits, shape.rows, shape.classes, name,
                                                                 target, why_not);
            nnplug::bench::ParallelTriad triad(threads, shape.rows * shape.classes * 4 / 3);
            double best = 1e30, best_torch = 1e30, best_triad = 1e30;
            for (int rep = 0; rep < reps; ++rep) {
                best_triad = std::min(best_triad, seconds_per_call([&] { triad.run(); }, 0.2));
                best = std::min(best, seconds_per_call([&] { step.call(); }, 0.2));
                if (torch) best_torch = std::min(best_torch, seconds_per_call([&] { torch->step(); }, 0.2));
            }
            const double gbs = static_cast<double>(step.bytes()) / best * 1e-9;
            const double triad_gbs = triad.bytes_per_second(best_triad) * 1e-9;
            std::printf("%-12s %-9s %11.2f %11s %9s %9.2f %11.2f %12.2f\n", text.c_str(), name.c_str(),
                        best * 1e3, torch ? std::to_string(best_torch * 1e3).substr(0, 8).c_str() : "-",
                        torch ? std::to_string(best_torch / best).substr(0, 5).c_str() : "-", gbs, triad_gbs,
                        gbs / triad_gbs);
            if (!torch) std::printf("  (no PyTorch column: %s)\n", why_not.c_str());
        }
    }
    aclFinalize();
    return 0;
}

}  // namespace

// No exception leaves main: one that escapes the run ends the program with its text.
int main(int argc, char** argv) {
    try {
        return run_main(argc, argv);
    } catch (const std::exception& error) {
        std::fprintf(stderr, "nnplug_compare_cross_entropy_loss: %s\n", error.what());
    } catch (...) {
        std::fprintf(stderr, "nnplug_compare_cross_entropy_loss: an unknown exception\n");
    }
    return 1;
}
