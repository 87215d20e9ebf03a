#include "op_table.h"

#include <dlfcn.h>
#include <nnplug/op_schema.h>

#include <array>
#include <stdexcept>
#include <utility>

namespace nnplug::python {
namespace {

// The most input tensors of an op this package can call (the aclnn losses take up to 5).
constexpr int kMostInputs = 7;

using FirstPhase = aclnnStatus (*)(void* symbol, const aclTensor* const* in, int64_t reduction,
                                   aclTensor* out, uint64_t* workspace_size, aclOpExecutor** executor);

// One input tensor argument, for each index of a pack.
template <size_t>
using InputArgument = const aclTensor*;

// A first phase that takes sizeof...(I) input tensors, called with the signature every
// aclnn loss has: its tensors in slot order, `reduction` before `out`.
template <size_t... I>
aclnnStatus call_first_phase(void* symbol, std::index_sequence<I...>, const aclTensor* const* in,
                             int64_t reduction, aclTensor* out, uint64_t* workspace_size,
                             aclOpExecutor** executor) {
    using Function = aclnnStatus (*)(InputArgument<I>..., int64_t, aclTensor*, uint64_t*, aclOpExecutor**);
    return reinterpret_cast<Function>(symbol)(in[I]..., reduction, out, workspace_size, executor);
}

template <size_t Inputs>
aclnnStatus call_with_inputs(void* symbol, const aclTensor* const* in, int64_t reduction, aclTensor* out,
                             uint64_t* workspace_size, aclOpExecutor** executor) {
    return call_first_phase(symbol, std::make_index_sequence<Inputs>(), in, reduction, out, workspace_size,
                            executor);
}

// kFirstPhases[n - 1] calls a first phase of n inputs.
template <size_t... N>
constexpr std::array<FirstPhase, sizeof...(N)> first_phases(std::index_sequence<N...>) {
    return {&call_with_inputs<N + 1>...};
}
constexpr auto kFirstPhases = first_phases(std::make_index_sequence<kMostInputs>());

// The op's entry, or none when its signature is not a loss's: one output, in the last
// slot, and one attribute, the reduction.
bool make_entry(const nnplug_op_schema& schema, void* library, OpEntry& entry) {
    const size_t inputs = schema.operand_count - 1;
    if (schema.operand_count < 2 || inputs > static_cast<size_t>(kMostInputs)) return false;
    for (size_t i = 0; i < schema.operand_count; ++i)
        if ((schema.operands[i].output != 0) != (i == inputs)) return false;
    if (schema.attr_count != 1 || schema.attrs[0].key != NNPLUG_ATTR_REDUCTION) return false;
    entry.name = schema.api;
    entry.inputs = static_cast<int>(inputs);
    entry.get_workspace_symbol = dlsym(library, (entry.name + "GetWorkspaceSize").c_str());
    entry.run = reinterpret_cast<RunFn>(dlsym(library, entry.name.c_str()));
    if (entry.get_workspace_symbol == nullptr || entry.run == nullptr)
        throw std::runtime_error("libnnplug publishes " + entry.name + " but does not export it");
    return true;
}

std::vector<OpEntry> make_table() {
    // The library that holds the published schemas exports the entry points too.
    Dl_info info{};
    if (dladdr(reinterpret_cast<void*>(&nnplug_op_schema_at), &info) == 0 || info.dli_fname == nullptr)
        throw std::runtime_error("cannot find libnnplug");
    void* library = dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD);
    if (library == nullptr) throw std::runtime_error(std::string("cannot open libnnplug: ") + dlerror());
    std::vector<OpEntry> table;
    for (size_t i = 0; i < nnplug_op_schema_count(); ++i) {
        OpEntry entry;
        if (make_entry(*nnplug_op_schema_at(i), library, entry)) table.push_back(std::move(entry));
    }
    dlclose(library);  // only drops the reference taken here: libnnplug stays loaded
    return table;
}

}  // namespace

aclnnStatus OpEntry::get_workspace(const aclTensor* const* in, int64_t reduction, aclTensor* out,
                                   uint64_t* workspace_size, aclOpExecutor** executor) const {
    return kFirstPhases[inputs - 1](get_workspace_symbol, in, reduction, out, workspace_size, executor);
}

const std::vector<OpEntry>& all_ops() {
    static const std::vector<OpEntry> table = make_table();
    return table;
}

const OpEntry* find_op(const std::string& name) {
    for (const OpEntry& entry : all_ops())
        if (entry.name == name) return &entry;
    return nullptr;
}

}  // namespace nnplug::python
