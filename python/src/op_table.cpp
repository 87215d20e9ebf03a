#include "op_table.h"

#include <dlfcn.h>
#include <nnplug/op_schema.h>

#include <stdexcept>

namespace nnplug::python {
namespace {

// The most input tensors of an op this package can call (the aclnn losses take up to 5).
constexpr int kMostInputs = 7;

// The op's entry, or none when its signature is not a loss's: one output, in the last slot.
bool make_entry(const nnplug_op_schema& schema, void* library, OpEntry& entry) {
    const size_t inputs = schema.operand_count - 1;
    if (schema.operand_count < 2 || inputs > static_cast<size_t>(kMostInputs)) return false;
    for (size_t i = 0; i < schema.operand_count; ++i)
        if ((schema.operands[i].output != 0) != (i == inputs)) return false;
    entry.name = schema.api;
    entry.inputs = static_cast<int>(inputs);
    entry.schema = &schema;
    entry.run = reinterpret_cast<RunFn>(dlsym(library, entry.name.c_str()));
    if (dlsym(library, (entry.name + "GetWorkspaceSize").c_str()) == nullptr || entry.run == nullptr)
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

aclnnStatus OpEntry::get_workspace(const aclTensor* const* in, const std::vector<nnplug_attr_arg>& attrs,
                                   aclTensor* out, uint64_t* workspace_size, aclOpExecutor** executor) const {
    std::vector<const aclTensor*> tensors(in, in + inputs);
    tensors.push_back(out);
    return nnplug_op_get_workspace_size(schema, tensors.data(), attrs.data(), workspace_size, executor);
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
