// SPDX-License-Identifier: Apache-2.0
// WYJIT_HOST_DEVICE: __host__ __device__ under a CUDA compiler, nothing in the host build, for
// the constexpr helpers and parameter blocks the launch layer shares with the kernels.
#pragma once

#if !defined(WYJIT_HOST_DEVICE)
#if defined(__CUDACC__)
#define WYJIT_HOST_DEVICE __host__ __device__
#else
#define WYJIT_HOST_DEVICE
#endif
#endif
