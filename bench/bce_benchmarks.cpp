// Google Benchmark suite: the BCE ops and the BCE-with-logits ops through the public
// two-phase API per dtype, size and reduction on the backend the config (NNPLUG_CONFIG /
// NNPLUG_BACKEND) selects.
// Reports bytes/s and items/s; no assertion on time.
#include <acl/acl.h>
#include <benchmark/benchmark.h>

#include <memory>

#include "bce_call.h"

namespace nnplug::bench {
namespace {

void run_case(benchmark::State& state, BceCase c) {
    c.numel = c.classes > 0 ? state.range(0) / c.classes * c.classes : state.range(0);
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
    // With logits: no weight; "_pw" has a posWeight of [1000] against [N / 1000, 1000].
    const struct {
        const char* name;
        BceCase c;
    } ops[] = {{"BCE/backward_none", {true, 0}},
               {"BCE/backward_mean", {true, 1}},
               {"BCE/forward_none", {false, 0}},
               {"BCE/forward_mean", {false, 1}},
               {"BCEWithLogits/forward_none", {false, 0, ACL_FLOAT, 0, true}},
               {"BCEWithLogits/forward_mean", {false, 1, ACL_FLOAT, 0, true}},
               {"BCEWithLogits/backward_none", {true, 0, ACL_FLOAT, 0, true}},
               {"BCEWithLogits/target_backward_none", {true, 0, ACL_FLOAT, 0, true, true}},
               {"BCEWithLogits/forward_mean_pw", {false, 1, ACL_FLOAT, 0, true, false, 1000}},
               {"BCEWithLogits/backward_none_pw", {true, 0, ACL_FLOAT, 0, true, false, 1000}}};
    for (const auto& op : ops) {
        for (const auto& dtype : dtypes) {
            const std::string name = std::string(op.name) + "/" + dtype.name;
            BceCase c = op.c;
            c.dtype = dtype.dtype;
            benchmark::RegisterBenchmark(name.c_str(), [c](benchmark::State& state) { run_case(state, c); })
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
