// SPDX-License-Identifier: Apache-2.0
/// @file gdn_verify.hpp
/// @brief Typed launch of the WY gated-delta-rule verify kernel.
#pragma once

#include <cuda.h>

#include <cstdint>

#include "wyjit/jit.hpp"

namespace wyjit {

/// Arguments of one verify launch. Strides are in elements of the pointed-to type.
///
/// Row (b, t) of q/k/v/g/beta/out is `b*K + t`. Per sequence the state holds HV heads of
/// `dk*dv` elements in the variant's layout.
struct GdnVerifyArgs {
  int batch = 0;        ///< sequences
  int num_k_heads = 0;  ///< HK
  int num_v_heads = 0;  ///< HV, a multiple of HK
  int k = 0;            ///< tokens per sequence: must equal the variant's K
  int dk = 0;           ///< must equal the variant's dk
  int dv = 0;           ///< must equal the variant's dv
  float scale = 0.0f;   ///< multiplies q; 1/sqrt(dk) is the usual value

  const void* q = nullptr;      ///< [batch*K, qk_stride] io dtype, head h at h*dk
  const void* k_in = nullptr;   ///< [batch*K, qk_stride] io dtype
  const void* v = nullptr;      ///< [batch*K, v_stride] io dtype, head vh at vh*dv
  const float* g = nullptr;     ///< [batch*K, gb_stride] log-decay (<= 0), fp32
  const float* beta = nullptr;  ///< [batch*K, gb_stride] fp32
  /// Fused gating (variant option `gating`) replaces g and beta: g = -exp(a_log[vh]) *
  /// softplus(a + dt_bias[vh]), beta = sigmoid(b).
  const void* a = nullptr;         ///< [batch*K, gb_stride] io dtype
  const void* b = nullptr;         ///< [batch*K, gb_stride] io dtype
  const float* a_log = nullptr;    ///< [HV]
  const float* dt_bias = nullptr;  ///< [HV]
  void* out = nullptr;             ///< [batch*K, o_stride] io dtype, head vh at vh*dv
  std::int64_t qk_stride = 0;      ///< >= HK*dk
  std::int64_t v_stride = 0;       ///< >= HV*dv
  std::int64_t gb_stride = 0;      ///< >= HV
  std::int64_t o_stride = 0;       ///< >= HV*dv

  /// Strided addressing: S_b = state + b*state_seq_stride (read, then final state written).
  void* state = nullptr;
  std::int64_t state_seq_stride = 0;  ///< >= HV*dk*dv
  /// Hi_t(b) = inter + b*inter_seq_stride + t*inter_tok_stride, t = 0..K-2 (unused when K == 1).
  void* inter = nullptr;
  std::int64_t inter_seq_stride = 0;
  std::int64_t inter_tok_stride = 0;  ///< >= HV*dk*dv

  /// Table addressing: device array of state pointers, K slabs of `slab_stride` entries:
  /// tables[b] is S_b (read, then the final state written there), tables[(1+t)*slab_stride + b]
  /// is Hi_t(b), t = 0..K-2. Must be the fixed buffer of a GdnTableStager (graph-safe).
  void* const* tables = nullptr;
  std::int64_t slab_stride = 0;  ///< >= batch

  /// Slot addressing: `state` is a pool of `num_slots` slots, `slot_stride` elements apart.
  /// Sequence b reads slot read_slot[b] and writes the state after token t to
  /// write_slot[b*write_slot_stride + t], t = 0..K-1 (t = K-1: the final state). A negative
  /// read slot marks padding: nothing of sequence b is read or written. A negative write slot
  /// skips that one state. A slot >= num_slots is treated like a negative one.
  std::int64_t slot_stride = 0;  ///< >= HV*dk*dv
  std::int32_t num_slots = 0;
  const std::int32_t* read_slot = nullptr;   ///< [batch] int32, device memory
  const std::int32_t* write_slot = nullptr;  ///< [batch][write_slot_stride] int32, device memory
  std::int64_t write_slot_stride = 0;        ///< >= K
};

/// A fixed device buffer that holds the pointer tables of table addressing. Its address never
/// changes, so a CUDA graph that captured a launch reading it stays valid when stage() writes
/// new tables between replays.
class GdnTableStager {
 public:
  /// Allocates room for `max_batch` sequences of a K-token variant (K slabs of max_batch).
  GdnTableStager(int k, int max_batch);
  ~GdnTableStager();
  GdnTableStager(const GdnTableStager&) = delete;
  GdnTableStager& operator=(const GdnTableStager&) = delete;

  /// Copies `states[b]` (S_b) and `inter[t][b]` (Hi_t(b), t = 0..K-2) for b < batch into the
  /// buffer with cuMemcpyHtoDAsync on `stream`; entries batch..max_batch-1 become null. The
  /// host arrays must stay alive until the copy completes.
  ///
  /// Null entries are padding, anywhere in the batch (what a CUDA-graph engine needs when a
  /// slot of a captured batch is free this step):
  /// - `states[b]` null: sequence b is skipped whole (nothing read, nothing written, its out
  ///   rows left as they were); its `inter[t][b]` entries are ignored and may be anything.
  /// - `inter[t][b]` null while `states[b]` is not: Hi_t(b) is not written (the sequence is
  ///   still verified, its other states and its final state written), like a negative write
  ///   slot of slot addressing.
  /// The arrays themselves (`states`, and `inter` and each `inter[t]` when K > 1) must not be
  /// null. Throws Error(invalid_argument) (see check_stage) before copying anything, or when
  /// `stream` is being captured.
  void stage(void* const* states, void* const* const* inter, int batch, CUstream stream);

  /// The argument checks of stage() for a stager of `k` and `max_batch`, without a stager or
  /// a driver: batch in 1..max_batch, non-null arrays. Throws Error(invalid_argument) naming
  /// the argument.
  static void check_stage(int k, int max_batch, void* const* states, void* const* const* inter,
                          int batch);

  void* const* device_tables() const noexcept { return tables_; }
  std::int64_t slab_stride() const noexcept { return max_batch_; }
  int k() const noexcept { return k_; }

 private:
  int k_ = 0;
  int max_batch_ = 0;
  void* const* tables_ = nullptr;
};

/// Checks `args` against `kernel.spec()` and the data contract; throws Error(invalid_argument)
/// naming the argument and its value. Touches no device memory and no driver.
void check_gdn_verify_args(const KernelSpec& spec, const GdnVerifyArgs& args);

/// Checks, then launches on `stream`. Allocates nothing and never synchronises, so it can be
/// captured in a CUDA graph. The kernel must come from Jit::kernel for a gdn_verify spec.
void launch_gdn_verify(const Kernel& kernel, const GdnVerifyArgs& args, CUstream stream);

}  // namespace wyjit
