# SPDX-License-Identifier: Apache-2.0
"""Stand-ins for torch tensors in the CPU tests: what wyjit reads of a tensor, no memory."""


class FakeTensor:
    """The parts of a torch tensor wyjit reads."""

    _next = 0x7F0000000000

    def __init__(self, shape, dtype="float32", strides=None, device="cuda:0", is_cuda=True,
                 ptr=None):
        self.shape = tuple(shape)
        self.dtype = "torch." + dtype
        if strides is None:
            strides, step = [], 1
            for size in reversed(self.shape):
                strides.insert(0, step)
                step *= size
        self._strides = tuple(strides)
        self.device = device
        self.is_cuda = is_cuda
        if ptr is None:
            ptr = FakeTensor._next
            FakeTensor._next += 1 << 30  # 1 GiB apart: aligned, never overlapping
        self._ptr = ptr

    def data_ptr(self):
        return self._ptr

    def stride(self):
        return self._strides

    def get_device(self):
        """torch's: the CUDA device's index, -1 on the host."""
        return int(self.device.split(":")[1]) if self.device.startswith("cuda:") else -1
