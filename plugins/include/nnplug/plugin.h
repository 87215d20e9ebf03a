/*
 * nnplug plugin ABI, version 2: the C contract between the nnplug runtime and a backend.
 *
 * A backend is a shared object that exports one symbol, NNPLUG_PLUGIN_ENTRY_NAME, a
 * function returning a pointer to a constant nnplug_plugin table. Version 2 is the last
 * breaking version: from here on the ABI only grows by appending.
 *
 * Growth rules (read them before adding anything):
 *  - Every table and descriptor starts with `struct_size`. A reader takes it as "at
 *    least this big": it reads the members it knows that fit inside struct_size and
 *    treats the missing ones as absent. A table smaller than the version-2 layout is
 *    refused at load.
 *  - New members are only ever appended, and a new member is optional: null (or 0)
 *    means "the default", which the member's comment states.
 *  - Enum values (ops, operand slots, attribute keys, statuses, dtypes) are never
 *    renumbered or reused; new ones are appended.
 *  - Tables a plugin hands out in arrays are arrays of pointers (`ops`), so that a
 *    bigger element from a newer plugin never shifts the ones after it.
 *
 * Rules of the boundary:
 *  - Plain C types only; no exception crosses it (a C++ backend catches them all).
 *  - One error channel: every call that returns nnplug_status leaves, on failure, a
 *    one-line message for last_error() on the calling thread (create's too, read with a
 *    null context). The runtime prefixes it with the aclnn/acl call's name.
 *  - The runtime has already validated, broadcast-planned and coalesced every
 *    descriptor: a backend sees dims, strides, dtypes and pointers, never aclTensor,
 *    YAML or spdlog types, and never needs to re-derive an op's semantics (the mean's
 *    scale, the element count and the reduced output come as attributes and flags).
 *    What only the data can tell is the backend's, and exactly this: for an op with a
 *    class axis, the weighted mean's divisor (summed in a fixed order, so the bits do not
 *    depend on threads) and the check that each class index is in [0, C) or ignored; an
 *    index that is neither fails the launch (or the stream) with NNPLUG_ERR_INVALID_ARGUMENT
 *    and one line naming the element and its value, before anything is written.
 *
 * Lifetimes during asynchronous work:
 *  - `desc` and `plan` passed to a call are valid for that call only. A backend that
 *    runs a launch later (on a stream worker) copies the descriptor (it is plain data,
 *    copyable by value) and keeps its plan alive itself, for example by reference
 *    counting: the runtime may release a plan as soon as launch returns.
 *  - Tensor data and the workspace are the caller's: they stay valid until the stream
 *    has been synchronized (as in CANN, the host program must not free them earlier).
 *
 * Concurrency: after create returns, the runtime may call any member other than
 * create and destroy from several host threads at once on one context (streams,
 * copies, malloc/free, prepare/launch/release of different or the same plans). Launches
 * on one stream run in the order they were made. destroy is called once, after every
 * other call on that context has returned.
 */
#ifndef NNPLUG_PLUGIN_H
#define NNPLUG_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define NNPLUG_PLUGIN_ABI_VERSION 2u
#define NNPLUG_PLUGIN_ENTRY_NAME "nnplug_plugin_entry"
#define NNPLUG_MAX_DIMS 8
#define NNPLUG_MAX_OPERANDS 8 /* operand slots per op */
#define NNPLUG_MAX_ATTRS 8    /* attributes per op */

#if defined(_WIN32)
#define NNPLUG_PLUGIN_EXPORT __declspec(dllexport)
#else
#define NNPLUG_PLUGIN_EXPORT __attribute__((visibility("default")))
#endif

typedef enum nnplug_status {
    NNPLUG_OK = 0,
    NNPLUG_ERR_INVALID_ARGUMENT = 1, /* the caller passed something wrong */
    NNPLUG_ERR_UNSUPPORTED = 2,      /* valid, but this backend cannot do it */
    NNPLUG_ERR_OUT_OF_MEMORY = 3,    /* an allocation on the device failed */
    NNPLUG_ERR_BAD_HANDLE = 4,       /* unknown stream or pointer */
    NNPLUG_ERR_KERNEL = 5,           /* a kernel failed or broke a device rule */
    NNPLUG_ERR_INTERNAL = 6          /* a bug in the backend */
} nnplug_status;

/* Element types. Floating operands are computed in float32; the integer ones hold class
 * indices (a target), read as they are. */
typedef enum nnplug_dtype {
    NNPLUG_DTYPE_F32 = 0,
    NNPLUG_DTYPE_F16 = 1,
    NNPLUG_DTYPE_BF16 = 2,
    NNPLUG_DTYPE_I32 = 3,
    NNPLUG_DTYPE_I64 = 4,
    NNPLUG_DTYPE_U8 = 5
} nnplug_dtype;

/* One past the largest dtype this header knows; grows as dtypes are appended. A plugin
 * built against an older header has a smaller count and treats the newer dtypes as
 * unknown, which they are to it. */
#define NNPLUG_DTYPE_COUNT 6

#define NNPLUG_DTYPE_BIT(dt) (1u << (unsigned)(dt))

typedef enum nnplug_memcpy_kind {
    NNPLUG_MEMCPY_HOST_TO_HOST = 0,
    NNPLUG_MEMCPY_HOST_TO_DEVICE = 1,
    NNPLUG_MEMCPY_DEVICE_TO_HOST = 2,
    NNPLUG_MEMCPY_DEVICE_TO_DEVICE = 3
} nnplug_memcpy_kind;

typedef enum nnplug_memory_kind {
    NNPLUG_MEMORY_HOST = 0,  /* device memory is ordinary host memory */
    NNPLUG_MEMORY_DEVICE = 1 /* device memory is separate: pointers are checked */
} nnplug_memory_kind;

/* The ops, and the operand slots and attributes of each: nnplug/op_slots.h. */
#include "op_slots.h"

/* Flags of one operand. */
typedef enum nnplug_operand_flag {
    NNPLUG_OPERAND_PRESENT = 1u << 0, /* 0: an absent optional operand (its default applies) */
    NNPLUG_OPERAND_OUTPUT = 1u << 1,  /* written by the op */
    NNPLUG_OPERAND_REDUCED = 1u << 2  /* one element at `offset`; its strides are all 0 */
} nnplug_operand_flag;

/*
 * One operand seen in the op's iteration space. Strides are in elements, aligned with
 * the descriptor's dims, and 0 along broadcast dimensions. Element (i0..in-1) lives at
 * data + (offset + sum(i_k * strides[k])) * nnplug_dtype_size(dtype).
 */
typedef struct nnplug_tensor {
    int32_t dtype;                    /* nnplug_dtype */
    uint32_t flags;                   /* nnplug_operand_flag bits */
    int64_t strides[NNPLUG_MAX_DIMS]; /* elements, may be 0 */
    int64_t offset;                   /* elements from data to the first element */
    void* data;                       /* base of the storage */
    int64_t storage_bytes;            /* bytes of storage from data on */
} nnplug_tensor;

/* The type of an attribute's value: the type of the aclnn argument it carries (a `char*`
 * reduction word arrives as the I64 nnplug_reduction it names). */
typedef enum nnplug_attr_type {
    NNPLUG_ATTR_I64 = 0,
    NNPLUG_ATTR_F64 = 1,
    NNPLUG_ATTR_F32 = 2,
    NNPLUG_ATTR_BOOL = 3
} nnplug_attr_type;

/* One attribute: a key of nnplug_attr_key (op_slots.h) and its value, in the member its
 * type names. */
typedef struct nnplug_attr {
    uint32_t key;  /* nnplug_attr_key */
    uint32_t type; /* nnplug_attr_type */
    union {
        int64_t i64;
        double f64;
        float f32;
        uint8_t boolean; /* 0 or 1 */
    } value;
} nnplug_attr;

/*
 * A fully checked op call. The runtime drops size-1 dimensions and merges the ones
 * every operand walks contiguously, so an all-contiguous call arrives as ndim == 1.
 * Operands sit at their op's slots (op_slots.h); slots past operand_count and absent
 * optional operands have flags without NNPLUG_OPERAND_PRESENT.
 */
typedef struct nnplug_op_desc {
    uint32_t struct_size;          /* sizeof(nnplug_op_desc) of the runtime that made it */
    int32_t op;                    /* nnplug_op_kind */
    int32_t ndim;                  /* 0..NNPLUG_MAX_DIMS, iteration rank */
    int32_t operand_count;         /* slots in use, <= NNPLUG_MAX_OPERANDS */
    int32_t attr_count;            /* attrs in use, <= NNPLUG_MAX_ATTRS */
    int32_t reserved;              /* 0 */
    int64_t dims[NNPLUG_MAX_DIMS]; /* iteration shape (coalesced) */
    int64_t numel;                 /* product of dims, > 0 */
    nnplug_tensor operands[NNPLUG_MAX_OPERANDS];
    nnplug_attr attrs[NNPLUG_MAX_ATTRS];
    /* Appended after version 2's first layout: read them only when struct_size covers them
     * (nnplug_desc_class_axis). */
    /* The dim of dims that is the op's class axis, or -1 for an elementwise op. A class-axis
     * op's dims are [outer..., C, inner...], each side coalesced on its own and never empty
     * (a missing side is one dim of size 1), so a contiguous call arrives as [outer, C, inner]
     * with class_axis 1. An operand that lacks the axis (a target) has stride 0 along it; one
     * indexed by class (a weight (C)) has stride 0 along every other dim, and the kernel reads
     * its element at offset + class * strides[class_axis]. */
    int32_t class_axis;
    int32_t reserved2; /* 0 */
} nnplug_op_desc;

/* A key/value option from the config's per-backend section. */
typedef struct nnplug_option {
    const char* key;
    const char* value;
} nnplug_option;

/* An option a backend understands; the runtime rejects all others. A backend that
 * declares "log_level" receives the runtime's level (trace, debug, info, warn, error,
 * off) there unless its own config section sets one. */
typedef struct nnplug_option_info {
    const char* key;           /* e.g. "threads" */
    const char* default_value; /* as text */
    const char* description;   /* one line */
} nnplug_option_info;

/* One op a backend implements. */
typedef struct nnplug_op_i {
    uint32_t struct_size; /* sizeof(nnplug_op_i) of the plugin */
    int32_t op;           /* nnplug_op_kind; a plugin lists each op at most once */
    const char* name;     /* the aclnn name, e.g. "aclnnBinaryCrossEntropy", for messages and listings */
    /* (optional; null accepts every checked call) Refuses a call this backend cannot run:
     * returns NNPLUG_ERR_UNSUPPORTED (or NNPLUG_ERR_INVALID_ARGUMENT for an operand that
     * breaks a device rule, such as host memory on a device), writes the refused operand's
     * slot to *operand (-1: the call as a whole) and leaves the reason for last_error();
     * the runtime names the operand as the op's API does. */
    nnplug_status (*supports)(void* ctx, const nnplug_op_desc* desc, int32_t* operand);
    /* Plans a checked call at the first phase: *plan receives the backend's handle for
     * whatever it would otherwise recompute per launch (may be null), *workspace_bytes the
     * device workspace a launch needs (0 for none). A plan holds no data pointer: a
     * repeatable executor's operands may move (aclSetTensorAddr), and its later launches
     * get a descriptor that differs from prepare's in operands[].data only, which
     * supports has been asked about again. */
    nnplug_status (*prepare)(void* ctx, const nnplug_op_desc* desc, void** plan, uint64_t* workspace_bytes);
    /* Runs or enqueues the call on stream (see the lifetimes above); workspace holds at
     * least the bytes prepare asked for. May run many times for one plan. */
    nnplug_status (*launch)(void* ctx, const void* plan, const nnplug_op_desc* desc, void* workspace,
                            uint64_t workspace_bytes, void* stream);
    /* (optional; null when plans hold nothing) Frees a plan: called once per prepared
     * plan, when its executor is destroyed or consumed. */
    void (*release)(void* ctx, void* plan);
} nnplug_op_i;

/* What makes a device a device: memory, copies, streams. */
typedef struct nnplug_device_i {
    uint32_t struct_size; /* sizeof(nnplug_device_i) of the plugin */
    int32_t memory_kind;  /* nnplug_memory_kind */
    /* allocate bytes (> 0) of device memory */
    nnplug_status (*malloc)(void* ctx, size_t bytes, void** ptr);
    /* free device memory from malloc; an unknown pointer is NNPLUG_ERR_BAD_HANDLE */
    nnplug_status (*free)(void* ctx, void* ptr);
    /* synchronous copy; the backend checks that each side is where kind says */
    nnplug_status (*memcpy)(void* ctx, void* dst, const void* src, size_t bytes, int32_t kind);
    /* (optional; null: the runtime synchronizes the stream, then copies) copy enqueued on stream */
    nnplug_status (*memcpy_async)(void* ctx, void* dst, const void* src, size_t bytes, int32_t kind,
                                  void* stream);
    /* synchronous fill of device memory with a byte value */
    nnplug_status (*memset)(void* ctx, void* ptr, int32_t value, size_t bytes);
    /* create a stream; the runtime asks for one default stream per context */
    nnplug_status (*stream_create)(void* ctx, void** stream);
    /* destroy a stream after its pending work finished */
    nnplug_status (*stream_destroy)(void* ctx, void* stream);
    /* wait for a stream; returns the first error the stream met since the last wait */
    nnplug_status (*stream_synchronize)(void* ctx, void* stream);
} nnplug_device_i;

/* The table a plugin's entry symbol returns. */
typedef struct nnplug_plugin {
    uint32_t abi_version;              /* NNPLUG_PLUGIN_ABI_VERSION */
    uint32_t struct_size;              /* sizeof(nnplug_plugin) of the plugin */
    const char* name;                  /* the name a config selects, e.g. "cpu_tbb" */
    const char* description;           /* one line */
    const nnplug_option_info* options; /* the options create() understands */
    size_t option_count;

    /* Creates the context of one device from options (already checked against
     * `options`). The runtime creates device 0 first, asks it for device_count, then
     * creates devices 1..count-1 with the same options. On failure the reason is in
     * last_error(NULL). */
    nnplug_status (*create)(const nnplug_option* options, size_t option_count, int32_t device, void** ctx);
    /* destroy a context: waits for its streams, frees what it allocated */
    void (*destroy)(void* ctx);
    /* (optional; null means 1) the number of devices this backend drives with these options */
    uint32_t (*device_count)(void* ctx);
    /* the SoC name the context emulates or runs on, e.g. "Ascend910B" or "CPU" */
    const char* (*soc_name)(void* ctx);
    /* NNPLUG_DTYPE_BIT mask of the dtypes the device computes */
    uint32_t (*dtype_mask)(void* ctx);
    /* the message of the last failing call on this thread (ctx may be null) */
    const char* (*last_error)(void* ctx);

    const nnplug_device_i* device;
    const nnplug_op_i* const* ops; /* op_count pointers, one per op */
    size_t op_count;
} nnplug_plugin;

/* The entry symbol's type. */
typedef const nnplug_plugin* (*nnplug_plugin_entry_fn)(void);

/* Bytes per element of a dtype; 0 for one this header does not know. */
static inline size_t nnplug_dtype_size(int32_t dtype) {
    static const unsigned char kSizes[NNPLUG_DTYPE_COUNT] = {4, 2, 2, 4, 8, 1};
    return dtype >= 0 && dtype < NNPLUG_DTYPE_COUNT ? kSizes[dtype] : 0u;
}

/* Whether a dtype is one of the floating types (computed in float32). */
static inline int nnplug_dtype_is_floating(int32_t dtype) {
    return dtype == NNPLUG_DTYPE_F32 || dtype == NNPLUG_DTYPE_F16 || dtype == NNPLUG_DTYPE_BF16;
}

static inline const char* nnplug_dtype_name(int32_t dtype) {
    switch (dtype) {
        case NNPLUG_DTYPE_F32:
            return "float32";
        case NNPLUG_DTYPE_F16:
            return "float16";
        case NNPLUG_DTYPE_BF16:
            return "bfloat16";
        case NNPLUG_DTYPE_I32:
            return "int32";
        case NNPLUG_DTYPE_I64:
            return "int64";
        case NNPLUG_DTYPE_U8:
            return "uint8";
        default:
            return "unknown";
    }
}

static inline int nnplug_operand_present(const nnplug_op_desc* desc, int slot) {
    return slot >= 0 && slot < desc->operand_count &&
           (desc->operands[slot].flags & NNPLUG_OPERAND_PRESENT) != 0;
}

/* The attribute `key` of desc, or null when the call does not carry it. */
static inline const nnplug_attr* nnplug_find_attr(const nnplug_op_desc* desc, uint32_t key) {
    for (int32_t i = 0; i < desc->attr_count && i < NNPLUG_MAX_ATTRS; ++i)
        if (desc->attrs[i].key == key) return &desc->attrs[i];
    return 0;
}

static inline int64_t nnplug_attr_i64(const nnplug_op_desc* desc, uint32_t key, int64_t fallback) {
    const nnplug_attr* attr = nnplug_find_attr(desc, key);
    return attr != 0 && attr->type == NNPLUG_ATTR_I64 ? attr->value.i64 : fallback;
}

static inline double nnplug_attr_f64(const nnplug_op_desc* desc, uint32_t key, double fallback) {
    const nnplug_attr* attr = nnplug_find_attr(desc, key);
    return attr != 0 && attr->type == NNPLUG_ATTR_F64 ? attr->value.f64 : fallback;
}

static inline float nnplug_attr_f32(const nnplug_op_desc* desc, uint32_t key, float fallback) {
    const nnplug_attr* attr = nnplug_find_attr(desc, key);
    return attr != 0 && attr->type == NNPLUG_ATTR_F32 ? attr->value.f32 : fallback;
}

static inline int nnplug_attr_bool(const nnplug_op_desc* desc, uint32_t key, int fallback) {
    const nnplug_attr* attr = nnplug_find_attr(desc, key);
    return attr != 0 && attr->type == NNPLUG_ATTR_BOOL ? attr->value.boolean != 0 : fallback;
}

/* The class axis of desc, or -1: an elementwise op, or a descriptor from a runtime whose
 * layout ends before the member. */
static inline int32_t nnplug_desc_class_axis(const nnplug_op_desc* desc) {
    const size_t end = offsetof(nnplug_op_desc, class_axis) + sizeof desc->class_axis;
    return desc->struct_size >= end ? desc->class_axis : -1;
}

#ifdef __cplusplus
}
#endif

#endif /* NNPLUG_PLUGIN_H */
