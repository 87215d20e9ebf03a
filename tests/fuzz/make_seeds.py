#!/usr/bin/env python3
"""Writes the seed corpora of fuzz_ops, fuzz_class_targets, fuzz_checkpoint, fuzz_safe_file, fuzz_trace and fuzz_csv
(tests/fuzz/corpus/), in the input formats their sources describe. The seeds are committed; run this
only after changing a format:
    python3 tests/fuzz/make_seeds.py
fuzz_runtime_config's seeds are plain YAML files, written by hand."""
import math
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))

# --- fuzz_ops --------------------------------------------------------------------------------

CPU, ATLAS_910B, ATLAS_910 = 0, 1, 2
BCE, BCE_BACKWARD, LOGITS, LOGITS_BACKWARD, LOGITS_TARGET_BACKWARD = range(5)
OWN_STREAM, REPEATABLE, RERUN_CONSUMED, SHORT_WORKSPACE, NULL_WORKSPACE, DESTROY_EARLY = 1, 2, 4, 8, 16, 32
F32, F16, BF16 = 0, 2, 3  # dtype codes


def shape(*dims):
    return bytes([len(dims), *dims])


def operand(shape_code=0, extra_shape=b"", dtype=F32, dtype_extra=b"", fmt=0, fmt_extra=b"", layout=0,
            layout_extra=b"", offset=0, storage=0, storage_extra=b"", data=0, data_extra=b""):
    """One operand's description; see make_operand in fuzz_ops.cpp."""
    return (bytes([shape_code]) + extra_shape + bytes([dtype]) + dtype_extra + bytes([fmt]) + fmt_extra +
            bytes([layout]) + layout_extra + bytes([offset, storage]) + storage_extra + bytes([data]) + data_extra)


def floats(*values):
    return b"".join(struct.pack("<f", v) for v in values)


def ops_seed(backend, op, flags, reduction, self_shape, operands, data=b""):
    return bytes([backend, op, flags, reduction]) + self_shape + b"".join(operands) + data


def ops_seeds():
    probabilities = floats(*[0.05 + 0.9 * i / 19 for i in range(20)])
    labels = floats(*[float(i % 2) for i in range(20)])
    logits = floats(*[-4 + 8 * i / 20 for i in range(21)])
    yield "bce_mean_weight_broadcast", ops_seed(
        CPU, BCE, 0, 1, shape(4, 5),
        [operand(), operand(), operand(2, bytes([1, 0])), operand(3)],
        probabilities + bytes(64) + labels + bytes(64))
    yield "bce_backward_f16_padded_strides", ops_seed(
        ATLAS_910B, BCE_BACKWARD, OWN_STREAM, 0, shape(3, 7),
        [operand(layout=3, layout_extra=bytes([1])), operand(dtype=F16), operand(dtype=F16),
         operand(5, shape(7)), operand(dtype=BF16)])
    yield "logits_sum_pos_weight_per_class", ops_seed(
        CPU, LOGITS, REPEATABLE, 2, shape(2, 3, 4),
        [operand(), operand(), operand(5, shape(1, 3, 1)), operand(2, bytes([2, 0])), operand(4)],
        logits)
    yield "logits_backward_in_place_over_self", ops_seed(
        ATLAS_910B, LOGITS_BACKWARD, RERUN_CONSUMED, 0, shape(6, 2),
        [operand(3), operand(), operand(), operand(6), operand(6), operand(data=4, data_extra=bytes([1]))],
        b"\x00\x00\x80\x3f" + logits)
    yield "target_backward_empty_self_mean", ops_seed(
        CPU, LOGITS_TARGET_BACKWARD, 0, 1, shape(3, 0, 2),
        [operand(3), operand(), operand(), operand(6), operand(6), operand(3)])
    yield "bf16_refused_on_ascend910", ops_seed(
        ATLAS_910, BCE, 0, 0, shape(8),
        [operand(dtype=BF16), operand(dtype=BF16), operand(6), operand(dtype=BF16)])
    yield "invalid_dtype_and_format_values", ops_seed(
        CPU, BCE_BACKWARD, 0, 0, shape(2, 2),
        [operand(), operand(),
         operand(dtype=7, dtype_extra=bytes([15]) + struct.pack("<i", 99), fmt=7,
                 fmt_extra=bytes([3]) + struct.pack("<i", -5)),
         operand(6), operand()])
    yield "rank_9_repeatable_own_stream", ops_seed(
        ATLAS_910B, LOGITS, OWN_STREAM | REPEATABLE, 0, shape(1, 1, 1, 1, 1, 1, 1, 2, 2),
        [operand(), operand(), operand(6), operand(6), operand()])
    yield "column_major_offset_destroyed_early", ops_seed(
        ATLAS_910B, LOGITS_BACKWARD, DESTROY_EARLY | REPEATABLE | SHORT_WORKSPACE, 1, shape(5, 3),
        [operand(3), operand(layout=4, offset=3, storage=4, storage_extra=bytes([9])), operand(layout=4),
         operand(2, bytes([0, 1])), operand(6), operand(3)])
    yield "output_overlapping_itself", ops_seed(
        CPU, LOGITS_BACKWARD, NULL_WORKSPACE, 0, shape(4, 4),
        [operand(), operand(), operand(), operand(6), operand(6), operand(layout=5, layout_extra=bytes([1]))])
    yield "output_partly_over_target", ops_seed(
        CPU, BCE, 0, 0, shape(16),
        [operand(), operand(), operand(6), operand(offset=2, data=4, data_extra=bytes([1]))])


# --- fuzz_class_targets ----------------------------------------------------------------------

NLL, NLL2D, NLL_BACKWARD, NLL2D_BACKWARD, CE, CE_GRAD = range(6)
NO_WEIGHT, REDUCED_0D, OTHER_TARGET_DTYPE, ONE_D, FLOAT_OUT, TAME = 2, 4, 8, 16, 32, 64
CONTIGUOUS, DOUBLED, COLUMN_MAJOR, CLASS_INNERMOST = range(4)  # layout codes (offset: << 2)
IGNORE_M100, IGNORE_M1, IGNORE_CLASS = range(3)


def x(value):
    """A float element: (b - 128) / 16."""
    return int(value * 16) + 128


def class_seed(backend, op, flags, n, c, self_dtype, target_dtype, reduction, targets, hw=(), ignore=IGNORE_M100,
               ignore_class=0, smoothing=0, layouts=b"", values=b"", pattern=0):
    """One input of fuzz_class_targets; see read_call, make_tensors and fill_inputs there. n and c
    are their size bytes (below 200: n % 5, 1 + c % 8), targets one byte per row."""
    head = bytes([backend, op, flags, pattern, n, c, *hw, self_dtype, target_dtype, reduction, ignore, ignore_class])
    head += struct.pack("<i", 0) + (bytes([smoothing]) if op >= CE else b"")
    gradient = op in (NLL_BACKWARD, NLL2D_BACKWARD, CE_GRAD)
    # self, target, weight, gradOutput, totalWeight, out, totalWeightOut, logProbOut, zlossOut, lseForZlossOut
    tensors = (4 - (flags & NO_WEIGHT) // NO_WEIGHT + gradient + (op in (NLL_BACKWARD, NLL2D_BACKWARD)) +
               (op in (NLL, NLL2D)) + 3 * (op == CE))
    return head + layouts.ljust(tensors, b"\0") + bytes(targets) + values


def class_seeds():
    weights = bytes([32, 64, 16, 48, 32, 8, 0, 96])
    logits = bytes(x(v) for v in [0.5, -1, 2, 0.25, -3, 1.5, 0, 4, -0.5, 1, -2, 3, 0.75, -1.25, 2.5, 0.125])
    yield "nll_mean_valid", class_seed(CPU, NLL, 0, 4, 4, 0, 0, 1, [0, 4, 2, 1], values=weights[:5] + logits)
    yield "nll_target_equal_to_c", class_seed(ATLAS_910B, NLL, OWN_STREAM, 4, 4, 0, 1, 0, [0, 1, 209, 3],
                                              values=weights[:5] + logits)
    yield "nll2d_sum_uint8_channels_last", class_seed(
        CPU, NLL2D, 0, 2, 2, 1, 2, 2, [0, 1, 2, 2, 1, 0] * 2, hw=(2, 3),
        layouts=bytes([CLASS_INNERMOST, 0, 0, 0, 0]), values=weights[:3] + logits * 3)
    yield "nll_backward_strided_target_ignored", class_seed(
        ATLAS_910B, NLL_BACKWARD, 0, 3, 5, 0, 0, 0, [1, 192, 5], layouts=bytes([0, DOUBLED | 3 << 2]),
        values=weights[:6] + logits + logits[:2] + bytes([x(1), x(-2), x(0.5)]))
    yield "nll_one_d_f16_uint8_ignore_255", class_seed(
        CPU, NLL, ONE_D | REDUCED_0D, 0, 6, 1, 2, 1, [213], ignore=7, values=weights[:7] + logits[:7])
    yield "ce_mean_no_weight_smoothing", class_seed(
        CPU, CE, NO_WEIGHT, 3, 6, 0, 0, 1, [0, 6, 3], smoothing=2, values=logits + logits[:5])
    yield "ce_grad_bf16_negative_target_not_ignored", class_seed(
        ATLAS_910B, CE_GRAD, 0, 2, 3, 2, 1, 2, [1, 211], values=weights[:4] + logits[:8] + bytes([x(1)]))
    yield "ce_thousand_classes", class_seed(CPU, CE, 0, 2, 210, 0, 0, 0, [17, 191], values=weights * 125)
    yield "nll2d_backward_mean_total_weight", class_seed(
        ATLAS_910B, NLL2D_BACKWARD, REDUCED_0D, 1, 2, 0, 0, 1, [0, 1, 2, 1], hw=(2, 2),
        layouts=bytes([COLUMN_MAJOR]), values=weights[:3] + logits + bytes([x(1), 2]))
    yield "ce_ignore_class_tame", class_seed(
        CPU, CE, TAME, 4, 3, 0, 1, 0, [0, 2, 250, 1], ignore=IGNORE_CLASS, ignore_class=2, values=weights[:4] + logits)
    yield "ce_invalid_word_nan_smoothing", class_seed(ATLAS_910B, CE, 0, 2, 3, 0, 0, 4, [0, 1], smoothing=5)
    yield "ce_short_rows_nan_logit", class_seed(  # a NaN the short rows' vector maximum dropped
        CPU, CE, NO_WEIGHT, 3, 6, 0, 0, 1, [6, 0, 0], values=bytes([1, 0, 255, 255, 0, x(1.5), x(0)]) + logits)
    yield "nll_int32_target_huge", class_seed(CPU, NLL, 0, 3, 2, 0, 1, 2, [0, 213, 212], values=weights[:3] + logits)


# --- fuzz_checkpoint --------------------------------------------------------------------------

def mt19937_64_state(seed):
    """std::mt19937_64(seed) as libstdc++ writes it: 312 words, then the position (312)."""
    words = [seed & (2**64 - 1)]
    for i in range(1, 312):
        previous = words[-1]
        words.append((6364136223846793005 * (previous ^ (previous >> 62)) + i) & (2**64 - 1))
    return " ".join(str(w) for w in words) + " 312"


def text(value):
    data = value.encode()
    return struct.pack("<Q", len(data)) + data


def vector(fmt, values):
    return struct.pack("<Q", len(values)) + b"".join(struct.pack("<" + fmt, v) for v in values)


def checkpoint(settings, layers, epochs_done, batches_done, random_state, loss_sum, correct, seen, parameters,
               optimizer, steps, first, second, history, fingerprint=0x5EED):
    payload = struct.pack("<Q", len(settings)) + b"".join(text(k) + text(v) for k, v in settings)
    payload += struct.pack("<Q", fingerprint) + vector("q", layers)
    payload += struct.pack("<qq", epochs_done, batches_done) + text(random_state)
    payload += struct.pack("<dqq", loss_sum, correct, seen)
    payload += vector("f", parameters) + text(optimizer) + struct.pack("<q", steps)
    payload += vector("f", first) + vector("f", second)
    payload += struct.pack("<Q", len(history)) + b"".join(struct.pack("<qddddd", *row) for row in history)
    checksum = 1469598103934665603
    for byte in payload:
        checksum = ((checksum ^ byte) * 1099511628211) & (2**64 - 1)
    return b"NNPTRAIN" + struct.pack("<IQ", 1, len(payload)) + payload + struct.pack("<Q", checksum)


def checkpoint_seeds():
    # The runs of fuzz_checkpoint.cpp: 50 training rows in batches of 16 (4 per epoch), 5 epochs.
    mlp = [("model.kind", "mlp"), ("optimizer.kind", "adam")]
    logistic = [("model.kind", "logistic"), ("optimizer.kind", "sgd")]
    mlp_parameters = [0.1 * (i - 5) for i in range(11)]
    history = [(e, 0.7 - 0.1 * e, 0.6 + 0.05 * e, 0.72 - 0.1 * e, 0.58 + 0.05 * e, 0.8) for e in range(1, 6)]
    yield "mlp_adam_in_epoch_3", checkpoint(
        mlp, [3, 2, 1], 2, 1, mt19937_64_state(42), 11.0, 9, 16, mlp_parameters, "adam", 9,
        [0.01] * 11, [0.001] * 11, history[:2])
    yield "mlp_adam_after_epoch_3", checkpoint(
        mlp, [3, 2, 1], 3, 0, mt19937_64_state(7), 30.0, 31, 50, mlp_parameters, "adam", 12,
        [-0.02] * 11, [0.0] * 11, history[:3])
    yield "mlp_adam_finished", checkpoint(
        mlp, [3, 2, 1], 5, 0, mt19937_64_state(1), 25.0, 40, 50, mlp_parameters, "adam", 20,
        [0.0] * 11, [0.5] * 11, history)
    yield "logistic_sgd_in_epoch_1", checkpoint(
        logistic, [3, 1], 0, 3, mt19937_64_state(3), 33.3, 20, 48, [0.5, -0.5, 0.25, 0.0], "sgd", 3,
        [0.1, 0.2, 0.3, 0.4], [], [])
    yield "logistic_sgd_one_class_test_split", checkpoint(
        logistic + [("train.seed", "5")], [3, 1], 1, 2, mt19937_64_state(5), 20.0, 30, 32, [1.0, 2.0, 3.0, 4.0],
        "sgd", 6, [0.0] * 4, [], [(1, 0.5, 0.75, 0.4, 1.0, math.nan)])
    yield "negative_batch_index", checkpoint(
        mlp, [3, 2, 1], 2, -1, mt19937_64_state(42), 11.0, 9, 16, mlp_parameters, "adam", 7,
        [0.01] * 11, [0.001] * 11, history[:2])
    yield "longer_parameter_vector", checkpoint(
        mlp, [3, 2, 1], 2, 1, mt19937_64_state(42), 11.0, 9, 16, mlp_parameters + [9.0] * 64, "adam", 9,
        [0.01] * 11, [0.001] * 11, history[:2])


# --- fuzz_safe_file ---------------------------------------------------------------------------

PLANTED = ["nothing", "old_file", "link_out", "dangling_link", "folder", "fifo", "link_to_folder"]


def safe_file_seed(planted, name, data):
    """What is planted, the name's length and bytes, the bytes written; see fuzz_safe_file.cpp."""
    return bytes([PLANTED.index(planted), len(name)]) + name + data


def safe_file_seeds():
    for planted in PLANTED:
        yield f"{planted}_at_metrics_csv", safe_file_seed(planted, b"metrics.csv", b"epoch,loss\n1,0.69\n")
    yield "longest_name", safe_file_seed("old_file", b"n" * 255, b"bytes")
    yield "dot_dot", safe_file_seed("nothing", b"..", b"x")
    yield "empty_file", safe_file_seed("link_out", b"checkpoint.bin", b"")


# --- fuzz_trace ------------------------------------------------------------------------------

STREAM_EVENT, CORE_EVENT, STATISTICS, CLASS_STATISTICS = range(4)
NUMERIC_OPTIONS = ["devices", "vector_cores", "ub_kib", "memory_mib", "bandwidth_gbps", "host_threads",
                   "tile_elements"]
OTHER_OPTIONS = ["soc", "check_inputs", "log_level", "unknown"]


def trace_event(kind, track, name, begin, end, numbers):
    """One event of the writer part; see fuzz_writer in fuzz_trace.cpp."""
    head = bytes([kind]) + struct.pack("<h", track) + bytes([len(name)]) + name + struct.pack("<dd", begin, end)
    if kind < STATISTICS:
        return head + struct.pack("<q", numbers[0])
    if kind == STATISTICS:  # bytes moved, block_dim, tiles per core, tile elements, UB, workspace, device us
        return head + struct.pack("<qiqqqQd", *numbers)
    return head + struct.pack("<qiqqqq", *numbers)


def trace_option(key, value):
    """One option of the plugin part: a number (int or float) or bytes."""
    if key in OTHER_OPTIONS:
        return bytes([len(NUMERIC_OPTIONS) + OTHER_OPTIONS.index(key), len(value)]) + value
    index = NUMERIC_OPTIONS.index(key)
    if isinstance(value, int):
        return bytes([index, 1]) + struct.pack("<i", value)
    if isinstance(value, float):
        return bytes([index, 3]) + struct.pack("<d", value)
    return bytes([index, 0, len(value)]) + value


def trace_seeds():
    yield "writer_kernel_and_cores", (bytes([0, 10]) + b"Ascend910B" + trace_event(
        STATISTICS, 1, b"aclnnMseLoss", 1e6, 1e6 + 25.5, [4096, 8, 2, 1024, 98304, 0, 0.05]) + trace_event(
        CORE_EVENT, 0, b"mse_loss", 1e6 + 1, 1e6 + 20, [2]) + trace_event(
        CLASS_STATISTICS, 2, b"aclnnCrossEntropyLoss", 2e6, 2e6 + 3, [640, 4, 16, 64, 1, 4096]))
    yield "writer_odd_names_and_times", (bytes([0, 4]) + b"a\"\x00\xff" + trace_event(
        STREAM_EVENT, -1, b"\x1b[31m\xc3\xa9\n", math.inf, -math.inf, [-1]) + trace_event(
        STATISTICS, 7, b"", math.nan, 1e300, [2**62, -1, -2, 3, 4, 2**64 - 1, 1e300]))
    yield "plugin_defaults", bytes([1, 0])
    yield "plugin_options_in_range", bytes([1, 4]) + trace_option("soc", b"Ascend910") + trace_option(
        "bandwidth_gbps", 1.6e3) + trace_option("vector_cores", 8) + trace_option("check_inputs", b"true")
    yield "plugin_bandwidth_too_small", bytes([1, 1]) + trace_option("bandwidth_gbps", 1e-300)
    yield "plugin_threads_too_many", bytes([1, 2]) + trace_option("host_threads", 70000) + trace_option(
        "tile_elements", b"12abc")


# --- fuzz_csv --------------------------------------------------------------------------------

AUTO, SKLEARN, PLAIN = range(3)


def csv_seeds():
    yield "sklearn_header", bytes([AUTO]) + b"3,2,benign,malignant\n1.5,2.5,0\n-1,0.25,1\n3e2,4,0\n"
    yield "plain_with_names", bytes([PLAIN]) + b"radius,texture,label\n1,2,0\n3,4,1\n"
    yield "nul_in_label", bytes([AUTO]) + b"1,2,0\n3,4,1\x00\n"
    yield "utf16", bytes([AUTO]) + "a,b,label\n1,2,0\n".encode("utf-16")
    yield "long_field", bytes([PLAIN]) + b"1,2,0\n\xfe9x,2,1\n"  # 0xfe 9: 5000 nines
    yield "control_bytes", bytes([SKLEARN]) + b"2,1,a,b\n\x1b[2J,0\n1,\x07\n"


def write(folder, seeds):
    path = os.path.join(HERE, "corpus", folder)
    os.makedirs(path, exist_ok=True)
    for name, data in seeds:
        with open(os.path.join(path, name), "wb") as file:
            file.write(data)


if __name__ == "__main__":
    write("fuzz_ops", ops_seeds())
    write("fuzz_class_targets", class_seeds())
    write("fuzz_checkpoint", checkpoint_seeds())
    write("fuzz_safe_file", safe_file_seeds())
    write("fuzz_trace", trace_seeds())
    write("fuzz_csv", csv_seeds())
