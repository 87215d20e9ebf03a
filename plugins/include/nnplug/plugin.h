/*
 * nnplug plugin ABI: the C contract between the nnplug runtime and a backend.
 *
 * A backend is a shared object that exports one symbol, NNPLUG_PLUGIN_ENTRY_NAME,
 * a function returning a pointer to a constant nnplug_plugin table. The runtime
 * refuses a table whose abi_version or struct_size it does not know, with a
 * message; it never calls into a table it cannot read.
 *
 * Rules of the boundary:
 *  - plain C types only; no exceptions cross it (a C++ backend catches them all);
 *  - every call returning nnplug_status leaves a message for last_error() on failure;
 *  - the runtime has already validated and broadcast-planned every descriptor:
 *    a backend sees shapes, strides and pointers, never aclTensor, YAML or spdlog.
 */
#ifndef NNPLUG_PLUGIN_H
#define NNPLUG_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Bumped on any incompatible change of the structs below. */
#define NNPLUG_PLUGIN_ABI_VERSION 1u
#define NNPLUG_PLUGIN_ENTRY_NAME "nnplug_plugin_entry"
#define NNPLUG_MAX_DIMS 8

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

typedef enum nnplug_dtype {
    NNPLUG_DTYPE_F32 = 0,
    NNPLUG_DTYPE_F16 = 1,
    NNPLUG_DTYPE_BF16 = 2,
    NNPLUG_DTYPE_COUNT = 3
} nnplug_dtype;

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

typedef enum nnplug_op_kind {
    NNPLUG_OP_BCE_FORWARD = 0,  /* aclnnBinaryCrossEntropy */
    NNPLUG_OP_BCE_BACKWARD = 1  /* aclnnBinaryCrossEntropyBackward */
} nnplug_op_kind;

typedef enum nnplug_reduction {
    NNPLUG_REDUCTION_NONE = 0,
    NNPLUG_REDUCTION_MEAN = 1,
    NNPLUG_REDUCTION_SUM = 2
} nnplug_reduction;

/*
 * One operand seen in the op's iteration space. dims are the op's (already
 * broadcast) dims; strides are in elements and 0 along broadcast dimensions.
 * Element i0..in-1 lives at data + (offset + sum(i_k * strides[k])) * size(dtype).
 */
typedef struct nnplug_tensor {
    int32_t dtype;                     /* nnplug_dtype */
    int32_t present;                   /* 0 for an absent optional operand */
    int64_t strides[NNPLUG_MAX_DIMS];  /* elements, may be 0 */
    int64_t offset;                    /* elements from data to the first element */
    void* data;                        /* base of the storage */
    int64_t storage_bytes;             /* bytes of storage from data on */
} nnplug_tensor;

/*
 * A fully checked op. The runtime coalesces dimensions that every operand walks
 * contiguously, so an all-contiguous call arrives as ndim == 1 with strides 1.
 * For a reducing op `out` has ndim 0 semantics: only out.offset is used.
 */
typedef struct nnplug_op_desc {
    uint32_t struct_size;            /* sizeof(nnplug_op_desc) of the caller */
    int32_t op;                      /* nnplug_op_kind */
    int32_t reduction;               /* nnplug_reduction */
    int32_t ndim;                    /* 0..NNPLUG_MAX_DIMS, iteration rank */
    int64_t dims[NNPLUG_MAX_DIMS];   /* iteration shape (self's, coalesced) */
    int64_t numel;                   /* product of dims, > 0 */
    int64_t reduce_count;            /* N of the mean (self's element count) */
    nnplug_tensor grad_output;       /* backward only */
    nnplug_tensor self;
    nnplug_tensor target;
    nnplug_tensor weight;            /* present == 0: weight 1 */
    nnplug_tensor out;
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
    int32_t op; /* nnplug_op_kind */
    /* (optional) backend-specific refusal of a checked call; NNPLUG_OK to accept,
     * otherwise a one-line reason in reason[0..reason_len) */
    nnplug_status (*supports)(void* ctx, const nnplug_op_desc* desc, char* reason,
                              size_t reason_len);
    /* bytes of device workspace the launch needs (0 for none) */
    nnplug_status (*workspace_size)(void* ctx, const nnplug_op_desc* desc, uint64_t* bytes);
    /* run or enqueue the op on stream; workspace has at least the bytes asked for */
    nnplug_status (*launch)(void* ctx, const nnplug_op_desc* desc, void* workspace,
                            uint64_t workspace_bytes, void* stream);
} nnplug_op_i;

/* What makes a device a device: memory, copies, streams. */
typedef struct nnplug_device_i {
    int32_t memory_kind; /* nnplug_memory_kind */
    /* allocate bytes of device memory */
    nnplug_status (*malloc)(void* ctx, size_t bytes, void** ptr);
    /* free device memory from malloc; an unknown pointer is NNPLUG_ERR_BAD_HANDLE */
    nnplug_status (*free)(void* ctx, void* ptr);
    /* synchronous copy; the backend checks that each side is where kind says */
    nnplug_status (*memcpy)(void* ctx, void* dst, const void* src, size_t bytes, int32_t kind);
    /* (optional) copy enqueued on stream; null means the runtime syncs and copies */
    nnplug_status (*memcpy_async)(void* ctx, void* dst, const void* src, size_t bytes,
                                  int32_t kind, void* stream);
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
    uint32_t abi_version;      /* NNPLUG_PLUGIN_ABI_VERSION */
    uint32_t struct_size;      /* sizeof(nnplug_plugin) */
    const char* name;          /* the name a config selects, e.g. "cpu_tbb" */
    const char* description;   /* one line */
    const nnplug_option_info* options; /* the options create() understands */
    size_t option_count;

    /* create a context from options (already checked against `options`);
     * on failure writes a one-line reason into error[0..error_len) */
    nnplug_status (*create)(const nnplug_option* options, size_t option_count, void** ctx,
                            char* error, size_t error_len);
    /* destroy a context: waits for its streams, frees what it allocated */
    void (*destroy)(void* ctx);
    /* the SoC name the context emulates or runs on, e.g. "Ascend910B" or "CPU" */
    const char* (*soc_name)(void* ctx);
    /* NNPLUG_DTYPE_BIT mask of the dtypes the device computes */
    uint32_t (*dtype_mask)(void* ctx);
    /* the message of the last failing call on this thread */
    const char* (*last_error)(void* ctx);

    nnplug_device_i device;
    const nnplug_op_i* ops;
    size_t op_count;
} nnplug_plugin;

/* The entry symbol's type. */
typedef const nnplug_plugin* (*nnplug_plugin_entry_fn)(void);

static inline size_t nnplug_dtype_size(int32_t dtype) {
    return dtype == NNPLUG_DTYPE_F32 ? 4u : 2u;
}

static inline const char* nnplug_dtype_name(int32_t dtype) {
    switch (dtype) {
    case NNPLUG_DTYPE_F32: return "float32";
    case NNPLUG_DTYPE_F16: return "float16";
    case NNPLUG_DTYPE_BF16: return "bfloat16";
    default: return "unknown";
    }
}

#ifdef __cplusplus
}
#endif

#endif /* NNPLUG_PLUGIN_H */
