// The checks of where a descriptor's operands lie in memory, made when a first phase plans a
// call and again when a repeatable executor's addresses are set (executor_addresses.h).
// Each reports "<api>: <operand> ..." through the error state.
#pragma once

#include <aclnn/acl_meta.h>
#include <nnplug/plugin.h>

#include "op_schema.h"

namespace nnplug {

class Runtime;

// Device pointers of one device used while another is current are refused, never used.
// `only` limits a check to one slot (-1: every operand).
aclnnStatus check_operand_devices(const Runtime& runtime, const char* api, const OpSchema& schema,
                                  const nnplug_op_desc& desc, int only = -1);

// An operand whose storage starts in an aclrtMalloc block and runs past its end is refused
// before any backend sees it, on every backend: one that trusts the tensor would read or
// write past the block (cpu_tbb corrupted its heap).
aclnnStatus check_operand_extents(const Runtime& runtime, const char* api, const OpSchema& schema,
                                  const nnplug_op_desc& desc, int only = -1);

// An output may share memory with another operand only as the exact same elements of an
// input (elementwise in place), as the planner requires of the tensors; here over the
// descriptor of an executor whose operands moved (its views the planner has checked).
aclnnStatus check_output_overlap(const char* api, const OpSchema& schema, const nnplug_op_desc& desc);

}  // namespace nnplug
