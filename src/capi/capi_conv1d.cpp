// SPDX-License-Identifier: Apache-2.0
// The conv1d_update launch through the C API.
#include "capi/capi_internal.hpp"
#include "wyjit/conv1d_update.hpp"

using wyjit::capi::guarded;
using wyjit::capi::require;
using wyjit::capi::require_struct_size;

namespace {

wyjit::Conv1dUpdateArgs to_cpp(const wyjit_conv1d_update_args& c) {
  require_struct_size("wyjit_conv1d_update_args", c.struct_size, sizeof(wyjit_conv1d_update_args));
  wyjit::Conv1dUpdateArgs a;
  a.batch = c.batch;
  a.channels = c.channels;
  a.k = c.k;
  a.width = c.width;
  a.x = c.x;
  a.y = c.y;
  a.x_stride = c.x_stride;
  a.y_stride = c.y_stride;
  a.weight = c.weight;
  a.bias = c.bias;
  a.state_cols = c.state_cols;
  a.state_channel_stride = c.state_channel_stride;
  a.state_col_stride = c.state_col_stride;
  wyjit::capi::copy_state_addressing(c, a);
  a.window_offset = c.window_offset;
  a.path = static_cast<wyjit::Conv1dPath>(c.path);
  return a;
}

}  // namespace

extern "C" {

void wyjit_conv1d_update_args_init(wyjit_conv1d_update_args* args) {
  if (args == nullptr) return;
  *args = wyjit_conv1d_update_args{};
  args->struct_size = sizeof(wyjit_conv1d_update_args);
}

wyjit_status wyjit_check_conv1d_update(const wyjit_spec* spec,
                                       const wyjit_conv1d_update_args* args) {
  return guarded("wyjit_check_conv1d_update", [&] {
    require(spec, "spec");
    require(args, "args");
    wyjit::check_conv1d_update_args(wyjit::capi::to_cpp(*spec), to_cpp(*args));
    return WYJIT_OK;
  });
}

wyjit_status wyjit_launch_conv1d_update(const wyjit_kernel* kernel,
                                        const wyjit_conv1d_update_args* args, void* stream) {
  return guarded("wyjit_launch_conv1d_update", [&] {
    require(kernel, "kernel");
    require(args, "args");
    wyjit::launch_conv1d_update(kernel->kernel, to_cpp(*args), static_cast<CUstream>(stream));
    return WYJIT_OK;
  });
}

}  // extern "C"
