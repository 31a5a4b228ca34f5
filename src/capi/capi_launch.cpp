// SPDX-License-Identifier: Apache-2.0
// Typed launches and the table stager through the C API.
#include "capi/capi_internal.hpp"

using wyjit::capi::guarded;
using wyjit::capi::require;
using wyjit::capi::require_struct_size;

namespace {

wyjit::GdnVerifyArgs to_cpp(const wyjit_gdn_verify_args& c) {
  require_struct_size("wyjit_gdn_verify_args", c.struct_size, sizeof(wyjit_gdn_verify_args));
  wyjit::GdnVerifyArgs a;
  a.batch = c.batch;
  a.num_k_heads = c.num_k_heads;
  a.num_v_heads = c.num_v_heads;
  a.k = c.k;
  a.dk = c.dk;
  a.dv = c.dv;
  a.scale = c.scale;
  a.q = c.q;
  a.k_in = c.k_in;
  a.v = c.v;
  a.g = c.g;
  a.beta = c.beta;
  a.a = c.a;
  a.b = c.b;
  a.a_log = c.a_log;
  a.dt_bias = c.dt_bias;
  a.out = c.out;
  a.qk_stride = c.qk_stride;
  a.v_stride = c.v_stride;
  a.gb_stride = c.gb_stride;
  a.o_stride = c.o_stride;
  wyjit::capi::copy_state_addressing(c, a);
  return a;
}

}  // namespace

extern "C" {

void wyjit_gdn_verify_args_init(wyjit_gdn_verify_args* args) {
  if (args == nullptr) return;
  *args = wyjit_gdn_verify_args{};
  args->struct_size = sizeof(wyjit_gdn_verify_args);
}

wyjit_status wyjit_check_gdn_verify(const wyjit_spec* spec, const wyjit_gdn_verify_args* args) {
  return guarded("wyjit_check_gdn_verify", [&] {
    require(spec, "spec");
    require(args, "args");
    wyjit::check_gdn_verify_args(wyjit::capi::to_cpp(*spec), to_cpp(*args));
    return WYJIT_OK;
  });
}

wyjit_status wyjit_launch_gdn_verify(const wyjit_kernel* kernel, const wyjit_gdn_verify_args* args,
                                     void* stream) {
  return guarded("wyjit_launch_gdn_verify", [&] {
    require(kernel, "kernel");
    require(args, "args");
    wyjit::launch_gdn_verify(kernel->kernel, to_cpp(*args), static_cast<CUstream>(stream));
    return WYJIT_OK;
  });
}

wyjit_status wyjit_table_stager_create(int32_t k, int32_t max_batch, wyjit_table_stager** out) {
  return guarded("wyjit_table_stager_create", [&] {
    require(out, "out");
    *out = new wyjit_table_stager(k, max_batch);
    return WYJIT_OK;
  });
}

void wyjit_table_stager_destroy(wyjit_table_stager* stager) { delete stager; }

wyjit_status wyjit_table_stager_stage(wyjit_table_stager* stager, void* const* states,
                                      void* const* const* inter, int32_t batch, void* stream) {
  return guarded("wyjit_table_stager_stage", [&] {
    require(stager, "stager");
    stager->stager.stage(states, inter, batch, static_cast<CUstream>(stream));
    return WYJIT_OK;
  });
}

void* const* wyjit_table_stager_tables(const wyjit_table_stager* stager) {
  return stager == nullptr ? nullptr : stager->stager.device_tables();
}

int64_t wyjit_table_stager_slab_stride(const wyjit_table_stager* stager) {
  return stager == nullptr ? 0 : stager->stager.slab_stride();
}

}  // extern "C"
