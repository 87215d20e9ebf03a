// Google Benchmark suite: both ops through the public two-phase API per dtype, size
// and reduction on the backend the config (NNPLUG_CONFIG / NNPLUG_BACKEND) selects.
// Reports bytes/s and items/s; no assertion on time.
#include <acl/acl.h>
#include <benchmark/benchmark.h>

#include <memory>

#include "bce_call.h"

namespace nnplug::bench {
namespace {

void run_case(benchmark::State& state, bool backward, int64_t reduction, aclDataType dtype) {
    const BceCase c{backward, reduction, dtype, state.range(0)};
    const HostOperands host = make_host_operands(c, 1);
    DeviceCase device(c, host);
    for (auto _ : state) {
        if (const int status = device.call()) {
            state.SkipWithError(aclGetRecentErrMsg());
            (void)status;
            break;
        }
    }
    state.SetBytesProcessed(state.iterations() * bytes_moved(c));
    state.SetItemsProcessed(state.iterations() * c.numel);
}

void register_all() {
    const struct {
        const char* name;
        aclDataType dtype;
    } dtypes[] = {{"float32", ACL_FLOAT}, {"float16", ACL_FLOAT16}, {"bfloat16", ACL_BF16}};
    const struct {
        const char* name;
        bool backward;
        int64_t reduction;
    } ops[] = {{"backward_none", true, 0}, {"backward_mean", true, 1}, {"forward_none", false, 0}, {"forward_mean", false, 1}};
    for (const auto& op : ops) {
        for (const auto& dtype : dtypes) {
            const std::string name = std::string("BCE/") + op.name + "/" + dtype.name;
            benchmark::RegisterBenchmark(name.c_str(),
                                         [op, dtype](benchmark::State& state) {
                                             run_case(state, op.backward, op.reduction, dtype.dtype);
                                         })
                ->Arg(1 << 10)
                ->Arg(64 << 10)
                ->Arg(1 << 20)
                ->Arg(16 << 20)
                ->Arg(64 << 20)
                ->UseRealTime();
        }
    }
}

}  // namespace
}  // namespace nnplug::bench

int main(int argc, char** argv) {
    benchmark::Initialize(&argc, argv);
    if (aclInit(nullptr) != ACL_SUCCESS) {
        std::fprintf(stderr, "aclInit: %s\n", aclGetRecentErrMsg());
        return 1;
    }
    nnplug::bench::register_all();
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    aclFinalize();
    return 0;
}
