"""The golden case file format shared by every op's generator (tests/golden/README.md).

An op's generator (tools/golden/generate_<op>_golden.py) builds operands as views over
storage buffers, works out each case's expectation with PyTorch, and hands both to Writer.
"""
import math
import struct
from pathlib import Path

import torch

DTYPES = {"f32": torch.float32, "f16": torch.float16, "bf16": torch.bfloat16}
BITS = {"f32": torch.int32, "f16": torch.int16, "bf16": torch.int16}
HEX_DIGITS = {"f32": 8, "f16": 4, "bf16": 4}
SENTINEL = 1234.5  # initial value of out's storage, exact in every dtype


def hex_values(tensor, dtype):
    raw = tensor.to(DTYPES[dtype]).contiguous().view(BITS[dtype]).flatten().tolist()
    mask = (1 << (4 * HEX_DIGITS[dtype])) - 1
    return " ".join(format(v & mask, "0{}x".format(HEX_DIGITS[dtype])) for v in raw)


def hex_f64(values):
    return " ".join(struct.pack(">d", float(v)).hex() for v in values)


def dims(values):
    return "[" + ",".join(str(v) for v in values) + "]"


class Operand:
    """A view over a storage buffer, like an aclTensor."""

    def __init__(self, dtype, shape, storage_values, storage_shape=None, strides=None, offset=0):
        self.dtype = dtype
        self.shape = list(shape)
        self.storage = storage_values.to(torch.float64).to(DTYPES[dtype]).flatten()
        self.storage_shape = list(storage_shape) if storage_shape is not None else list(shape)
        self.strides = list(strides) if strides is not None else contiguous_strides(shape)
        self.offset = offset

    def view(self):
        """The view's values, in the operand's dtype."""
        return torch.as_strided(self.storage, self.shape, self.strides, self.offset)

    def line(self, role):
        return "tensor {} {} {} {} {} {} {}".format(role, self.dtype, dims(self.shape), dims(self.strides),
                                                  self.offset, dims(self.storage_shape),
                                                  hex_values(self.storage, self.dtype))


def contiguous_strides(shape):
    strides, step = [], 1
    for dim in reversed(list(shape)):
        strides.insert(0, step)
        step *= dim
    return strides


def numel(shape):
    return math.prod(shape) if shape else 1


class Writer:
    """Collects cases and writes them in the golden format."""

    def __init__(self):
        self.lines = []
        self.names = set()

    def case(self, name, op, attrs, operands, output_role, output, reference, expect_bits=None, expect_ulps=None,
             scale=None):
        """One case of `op` (its word in the test catalog) with its integer arguments `attrs`,
        its input operands by role (None: absent), its output's storage before the op, the
        float64 reference (per view element, or the reduced value) and, when the op has a
        canonical float32 expression, the output's whole storage after the op: exactly
        (`expect_bits`) or as (ulps, storage) with each view element within that many ulps
        (`expect_ulps`). `scale`: per view element (or the reduced value) the magnitude of the
        terms the float32 expression adds, whose rounding the runner allows for."""
        assert name not in self.names, name
        assert expect_bits is None or expect_ulps is None, name
        self.names.add(name)
        self.lines.append(" ".join(["case", name, op] + [str(a) for a in attrs]))
        for role, operand in operands.items():
            self.lines.append(operand.line(role) if operand is not None else "tensor {} none".format(role))
        self.lines.append(output.line(output_role))
        if expect_bits is not None:
            self.lines.append("expect_bits " + hex_values(expect_bits, output.dtype))
        if expect_ulps is not None:
            ulps, after = expect_ulps
            self.lines.append("expect_ulps {} {}".format(ulps, hex_values(after, output.dtype)))
        self.lines.append("reference_f64 " + hex_f64(reference))
        if scale is not None:
            assert len(scale) == len(reference), name
            self.lines.append("scale_f64 " + hex_f64(scale))
        self.lines.append("end")

    def write(self, path, header):
        Path(path).write_text("\n".join(header + self.lines) + "\n")
        print("wrote {} cases to {}".format(len(self.names), path))


def stored_after(output, view_values):
    """The output's storage after an op wrote view_values into its view."""
    after = output.storage.clone()
    torch.as_strided(after, output.shape, output.strides, output.offset).copy_(view_values.to(DTYPES[output.dtype]))
    return after


def uniform(generator, shape, low, high):
    return torch.rand(shape, generator=generator, dtype=torch.float64) * (high - low) + low


def probabilities(generator, shape):
    return uniform(generator, shape, 0.001, 0.999)


def contiguous(dtype, values):
    return Operand(dtype, list(values.shape), values)


def out_operand(dtype, shape):
    return Operand(dtype, shape, torch.full((numel(shape),), SENTINEL, dtype=torch.float64))


def transposed(dtype, values):
    """values (shape [a, b]) stored as [b, a] and viewed through a transpose."""
    a, b = values.shape
    return Operand(dtype, [a, b], values.t().contiguous(), storage_shape=[b, a], strides=[1, a])


def gapped(dtype, values, step=2, offset=3):
    """A view whose rows and columns skip storage elements: strides [cols*step*2, step]."""
    rows, cols = values.shape
    row_stride = cols * step + 5
    storage = torch.full((offset + rows * row_stride,), -3.25, dtype=torch.float64)
    view = Operand(dtype, [rows, cols], storage, storage_shape=[storage.numel()], strides=[row_stride, step],
                   offset=offset)
    torch.as_strided(view.storage, view.shape, view.strides, view.offset).copy_(values.to(DTYPES[dtype]))
    return view


def expanded(dtype, row, rows):
    """One stored row seen as `rows` rows: stride 0 along the first dimension."""
    return Operand(dtype, [rows, row.numel()], row, storage_shape=[row.numel()], strides=[0, 1])


