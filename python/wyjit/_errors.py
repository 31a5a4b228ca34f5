# SPDX-License-Identifier: Apache-2.0
"""wyjit's exceptions: one per C status code, all subclasses of wyjit.Error."""

from __future__ import annotations

OK = 0
INVALID_SPEC = 1
INVALID_ARGUMENT = 2
COMPILE_FAILED = 3
CACHE_IO = 4
CACHE_MISS_NO_JIT = 5
DRIVER = 6
NVRTC = 7
INTERNAL = 8

_NAMES = {
    INVALID_SPEC: "invalid_spec",
    INVALID_ARGUMENT: "invalid_argument",
    COMPILE_FAILED: "compile_failed",
    CACHE_IO: "cache_io",
    CACHE_MISS_NO_JIT: "cache_miss_no_jit",
    DRIVER: "driver",
    NVRTC: "nvrtc",
    INTERNAL: "internal",
}


class Error(Exception):
    """Any wyjit failure. `status` is the C status code, `code` its name, str() the message."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status
        self.code = _NAMES.get(status, "unknown")


class InvalidSpecError(Error, ValueError):
    """A spec field or canonical name is not allowed."""


class InvalidArgumentError(Error, ValueError):
    """An argument failed a check (in Python or in the library)."""


class CompileError(Error):
    """NVRTC rejected the stamped source."""


class CacheError(Error):
    """The disk cache could not be read or written."""


class NoJitMissError(Error):
    """No-JIT mode and no cached binary for the variant."""


class DriverError(Error):
    """The CUDA driver is missing or returned an error."""


class NvrtcError(Error):
    """An NVRTC call other than compilation failed."""


class InternalError(Error):
    """A wyjit bug, or the library could not be loaded."""


_CLASSES = {
    INVALID_SPEC: InvalidSpecError,
    INVALID_ARGUMENT: InvalidArgumentError,
    COMPILE_FAILED: CompileError,
    CACHE_IO: CacheError,
    CACHE_MISS_NO_JIT: NoJitMissError,
    DRIVER: DriverError,
    NVRTC: NvrtcError,
    INTERNAL: InternalError,
}


def error_for(status: int, message: str) -> Error:
    return _CLASSES.get(status, Error)(status, message)


def invalid_argument(message: str) -> InvalidArgumentError:
    return InvalidArgumentError(INVALID_ARGUMENT, message)
