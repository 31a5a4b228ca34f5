// SPDX-License-Identifier: Apache-2.0
#include "gpu/families/gdn_replay/replay_rig.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>

#include "common/gdn_replay_reference.hpp"
#include "wyjit/gdn_replay.hpp"

namespace wyjit::test {

namespace {

IoType io_type(DType t) {
  switch (t) {
    case DType::f32:
      return IoType::f32;
    case DType::f16:
      return IoType::f16;
    case DType::bf16:
      return IoType::bf16;
  }
  return IoType::f32;
}

template <typename T>
std::vector<std::uint8_t> bytes_of(const std::vector<T>& v) {
  std::vector<std::uint8_t> out(v.size() * sizeof(T));
  std::memcpy(out.data(), v.data(), out.size());
  return out;
}

template <typename T>
std::vector<T> values_of(const std::vector<std::uint8_t>& bytes) {
  std::vector<T> out(bytes.size() / sizeof(T));
  std::memcpy(out.data(), bytes.data(), out.size() * sizeof(T));
  return out;
}

// Slot of sequence b in the pools (slot addressing): reversed, so the indirection matters; slot
// `batch` is never used, and must stay untouched.
int slot_of(int b, int batch) { return batch - 1 - b; }

}  // namespace

ReplayRig::ReplayRig(const GdnReplaySpec& spec, const ReplayShape& shape, int base0)
    : spec_(spec),
      shape_(shape),
      kernel_(test_jit().kernel(spec)),
      rng_(shape.seed),
      rows_(shape.batch * spec.k),
      tile_(std::int64_t{shape.hv} * spec.dk * spec.dv),
      log_tile_(gdn_replay_log_floats(spec, shape.hk, shape.hv)),
      q_((std::size_t(rows_) * shape.hk * spec.dk * dtype_size(spec.io))),
      k_((std::size_t(rows_) * shape.hk * spec.dk * dtype_size(spec.io))),
      v_((std::size_t(rows_) * shape.hv * spec.dv * dtype_size(spec.io))),
      g_((std::size_t(rows_) * shape.hv * 4)),
      beta_((std::size_t(rows_) * shape.hv * 4)),
      a_((std::size_t(rows_) * shape.hv * dtype_size(spec.io))),
      b_((std::size_t(rows_) * shape.hv * dtype_size(spec.io))),
      a_log_((std::size_t(shape.hv) * 4)),
      dt_bias_((std::size_t(shape.hv) * 4)),
      out_((std::size_t(rows_) * shape.hv * spec.dv * dtype_size(spec.io))),
      state_((std::size_t(shape.batch + 1) * tile_ * dtype_size(spec.state))),
      log_((std::size_t(shape.batch + 1) * log_tile_ * 4)),
      cursor_((std::size_t(shape.batch) * 2 * 4)),
      accepted_((std::size_t(shape.batch) * 4)),
      slots_((std::size_t(shape.batch) * 4)),
      tables_((std::size_t(shape.batch) * sizeof(void*))),
      log_tables_((std::size_t(shape.batch) * sizeof(void*))),
      mat_((std::size_t(shape.batch + 1) * tile_ * dtype_size(spec.state))),
      mat_tables_((std::size_t(shape.batch) * sizeof(void*))),
      base_(static_cast<std::size_t>(shape.batch), base0 & (spec.log - 1)),
      len_(static_cast<std::size_t>(shape.batch), 0),
      padded_(static_cast<std::size_t>(shape.batch), false) {
  const int B = shape.batch, HV = shape.hv, DK = spec.dk, DV = spec.dv;
  const IoType st = io_type(spec.state);
  // ---- the prefill states, rounded to the checkpoint dtype: the exact model starts there ----
  std::normal_distribution<float> normal(0.0f, 0.5f);
  exact_.assign(std::size_t(B) * tile_, 0.0);
  std::vector<float> device_order(std::size_t(B + 1) * tile_, 0.0f);
  for (int b = 0; b < B; ++b) {
    const int tile_index = spec.addressing == Addressing::slot ? slot_of(b, B) : b;
    for (int vh = 0; vh < HV; ++vh) {
      for (int i = 0; i < DK; ++i) {
        for (int j = 0; j < DV; ++j) {
          const float x = round_to_io(normal(rng_), st);
          exact_[((std::size_t(b) * HV + vh) * DK + i) * DV + j] = x;
          const std::size_t in_head =
              spec.layout == Layout::vk ? std::size_t(j) * DK + i : std::size_t(i) * DV + j;
          device_order[std::size_t(tile_index) * tile_ + std::size_t(vh) * DK * DV + in_head] = x;
        }
      }
    }
  }
  // The unused tile (slot `batch`) holds a pattern that must survive every launch.
  for (std::int64_t e = 0; e < tile_; ++e) device_order[std::size_t(B) * tile_ + e] = 0.375f;
  state_.upload(pack_io(device_order, st));
  mat_.upload(pack_io(std::vector<float>(std::size_t(B + 1) * tile_, 0.625f), st));
  // NOTE: logs start as a pattern that is not zero: an entry read before it is written shows.
  log_.upload(bytes_of(std::vector<float>(std::size_t(B + 1) * log_tile_, 1e4f)));
  std::vector<int> cursor(std::size_t(B) * 2);
  std::vector<int> slots(static_cast<std::size_t>(B));
  std::vector<void*> tables(static_cast<std::size_t>(B)), log_tables(tables), mat_tables(tables);
  for (int b = 0; b < B; ++b) {
    cursor[2 * b] = base_[b];
    cursor[2 * b + 1] = 0;
    slots[b] = slot_of(b, B);
    tables[b] = static_cast<char*>(state_.get()) + std::size_t(b) * tile_ * dtype_size(spec.state);
    log_tables[b] = static_cast<char*>(log_.get()) + std::size_t(b) * log_tile_ * 4;
    mat_tables[b] =
        static_cast<char*>(mat_.get()) + std::size_t(b) * tile_ * dtype_size(spec.state);
  }
  cursor_.upload(bytes_of(cursor));
  slots_.upload(bytes_of(slots));
  tables_.upload(bytes_of(tables));
  log_tables_.upload(bytes_of(log_tables));
  mat_tables_.upload(bytes_of(mat_tables));

  tokens_.batch = B;
  tokens_.hk = shape.hk;
  tokens_.hv = HV;
  tokens_.k = spec.k;
  tokens_.dk = DK;
  tokens_.dv = DV;
  tokens_.scale = static_cast<double>(1.0f / std::sqrt(static_cast<float>(DK)));
  tokens_.l2norm_qk = spec.l2norm_qk;
  tokens_.fused_gating = spec.fused_gating;
}

namespace {

// State references of the rig's buffers for `addressing`: tiles `tile` elements of `bytes` each.
StateRefs refs_for(Addressing addressing, void* pool, std::int64_t tile, void* tables,
                   const std::int32_t* slots, int batch) {
  StateRefs r;
  switch (addressing) {
    case Addressing::strided:
      r.state = pool;
      r.state_seq_stride = tile;
      break;
    case Addressing::table:
      r.tables = static_cast<void* const*>(tables);
      r.slab_stride = batch;
      break;
    case Addressing::slot:
      r.state = pool;
      r.slot_stride = tile;
      r.num_slots = batch + 1;
      r.read_slot = slots;
      r.write_slot = slots;
      r.write_slot_stride = 1;
      break;
  }
  return r;
}

}  // namespace

void ReplayRig::launch_verify(CUstream stream) {
  GdnReplayVerifyArgs a;
  a.batch = shape_.batch;
  a.num_k_heads = shape_.hk;
  a.num_v_heads = shape_.hv;
  a.k = spec_.k;
  a.dk = spec_.dk;
  a.dv = spec_.dv;
  a.scale = static_cast<float>(tokens_.scale);
  a.q = q_.get();
  a.k_in = k_.get();
  a.v = v_.get();
  if (spec_.fused_gating) {
    a.a = a_.get();
    a.b = b_.get();
    a.a_log = static_cast<const float*>(a_log_.get());
    a.dt_bias = static_cast<const float*>(dt_bias_.get());
  } else {
    a.g = static_cast<const float*>(g_.get());
    a.beta = static_cast<const float*>(beta_.get());
  }
  a.out = out_.get();
  a.qk_stride = std::int64_t{shape_.hk} * spec_.dk;
  a.v_stride = std::int64_t{shape_.hv} * spec_.dv;
  a.gb_stride = shape_.hv;
  a.o_stride = std::int64_t{shape_.hv} * spec_.dv;
  const auto* slots = static_cast<const std::int32_t*>(slots_.get());
  a.states = refs_for(spec_.addressing, state_.get(), tile_, tables_.get(), slots, shape_.batch);
  a.log = refs_for(spec_.addressing, log_.get(), log_tile_, log_tables_.get(), slots, shape_.batch);
  a.cursor = static_cast<const std::int32_t*>(cursor_.get());
  a.cursor_stride = 2;
  a.path = shape_.path;
  launch_gdn_replay_verify(kernel_, a, stream);
}

void ReplayRig::launch_commit(CUstream stream) {
  GdnReplayCommitArgs a;
  a.batch = shape_.batch;
  a.k = spec_.k;
  a.cursor = static_cast<std::int32_t*>(cursor_.get());
  a.cursor_stride = 2;
  a.accepted = static_cast<const std::int32_t*>(accepted_.get());
  launch_gdn_replay_commit(kernel_, a, stream);
}

std::vector<double> ReplayRig::materialize_host() {
  GdnReplayMaterializeArgs a;
  a.batch = shape_.batch;
  a.num_k_heads = shape_.hk;
  a.num_v_heads = shape_.hv;
  a.dk = spec_.dk;
  a.dv = spec_.dv;
  const auto* slots = static_cast<const std::int32_t*>(slots_.get());
  a.states = refs_for(spec_.addressing, state_.get(), tile_, tables_.get(), slots, shape_.batch);
  a.log = refs_for(spec_.addressing, log_.get(), log_tile_, log_tables_.get(), slots, shape_.batch);
  a.cursor = static_cast<const std::int32_t*>(cursor_.get());
  a.cursor_stride = 2;
  a.out = refs_for(spec_.addressing, mat_.get(), tile_, mat_tables_.get(), slots, shape_.batch);
  a.out.read_slot = nullptr;  // write-only: the contract names no read slots for it
  launch_gdn_replay_materialize(kernel_, a, stream_.get());
  stream_.synchronize();
  const std::vector<float> device = unpack_io(
      mat_.download().data(), std::size_t(shape_.batch + 1) * tile_, io_type(spec_.state));
  const int B = shape_.batch, HV = shape_.hv, DK = spec_.dk, DV = spec_.dv;
  std::vector<double> host(std::size_t(B) * tile_);
  for (int b = 0; b < B; ++b) {
    const int tile_index = spec_.addressing == Addressing::slot ? slot_of(b, B) : b;
    for (int vh = 0; vh < HV; ++vh) {
      for (int i = 0; i < DK; ++i) {
        for (int j = 0; j < DV; ++j) {
          const std::size_t in_head =
              spec_.layout == Layout::vk ? std::size_t(j) * DK + i : std::size_t(i) * DV + j;
          host[((std::size_t(b) * HV + vh) * DK + i) * DV + j] =
              device[std::size_t(tile_index) * tile_ + std::size_t(vh) * DK * DV + in_head];
        }
      }
    }
  }
  // The unused destination tile is untouched.
  for (std::int64_t e = 0; e < tile_; ++e) {
    if (device[std::size_t(B) * tile_ + e] != round_to_io(0.625f, io_type(spec_.state))) {
      throw std::runtime_error("materialize wrote the unused tile");
    }
  }
  return host;
}

std::vector<int> ReplayRig::random_accepted(double p) {
  std::uniform_real_distribution<double> u(0.0, 1.0);
  std::vector<int> out(static_cast<std::size_t>(shape_.batch));
  for (int& a : out) {
    a = 1;
    while (a < spec_.k && u(rng_) < p) ++a;
  }
  return out;
}

ReplayErrors ReplayRig::step(const std::vector<int>& accepted, bool materialize) {
  const int B = shape_.batch, HK = shape_.hk, HV = shape_.hv, K = spec_.k;
  const IoType io = io_type(spec_.io);
  // ---- the step's tokens ----
  std::normal_distribution<float> normal(0.0f, 1.0f);
  std::uniform_real_distribution<float> g(shape_.g_lo, shape_.g_hi), beta(0.05f, 0.95f);
  const auto fill = [&](std::vector<float>& dst, std::size_t n) {
    dst.resize(n);
    for (float& x : dst) x = round_to_io(normal(rng_), io);
  };
  fill(tokens_.q, std::size_t(rows_) * HK * spec_.dk);
  fill(tokens_.k_in, std::size_t(rows_) * HK * spec_.dk);
  fill(tokens_.v, std::size_t(rows_) * HV * spec_.dv);
  tokens_.g.resize(std::size_t(rows_) * HV);
  tokens_.beta.resize(std::size_t(rows_) * HV);
  for (float& x : tokens_.g) x = g(rng_);
  for (float& x : tokens_.beta) x = beta(rng_);
  fill(tokens_.a, std::size_t(rows_) * HV);
  fill(tokens_.b, std::size_t(rows_) * HV);
  // NOTE: A_log in [-5, -3]: decays -exp(A_log) * softplus(.) of a few percent, a long memory.
  std::uniform_real_distribution<float> a_log(-5.0f, -3.0f), dt(-1.0f, 1.0f);
  tokens_.a_log.resize(static_cast<std::size_t>(HV));
  tokens_.dt_bias.resize(static_cast<std::size_t>(HV));
  for (float& x : tokens_.a_log) x = a_log(rng_);
  for (float& x : tokens_.dt_bias) x = dt(rng_);
  tokens_.state0_exact = exact_;
  const GdnReference ref = gdn_reference(tokens_);

  q_.upload(pack_io(tokens_.q, io));
  k_.upload(pack_io(tokens_.k_in, io));
  v_.upload(pack_io(tokens_.v, io));
  g_.upload(bytes_of(tokens_.g));
  beta_.upload(bytes_of(tokens_.beta));
  a_.upload(pack_io(tokens_.a, io));
  b_.upload(pack_io(tokens_.b, io));
  a_log_.upload(bytes_of(tokens_.a_log));
  dt_bias_.upload(bytes_of(tokens_.dt_bias));
  out_.upload(std::vector<std::uint8_t>(out_.bytes(), 0xff));  // NaN in every io dtype

  // ---- verify, then the outputs ----
  launch_verify(stream_.get());
  stream_.synchronize();
  const std::vector<float> out =
      unpack_io(out_.download().data(), std::size_t(rows_) * HV * spec_.dv, io);
  ReplayErrors errors;
  double scale = 0.0, worst = 0.0;
  for (std::size_t e = 0; e < ref.out.size(); ++e) {
    scale = std::max(scale, std::abs(ref.out[e]));
    const double d = std::abs(static_cast<double>(out[e]) - ref.out[e]);
    worst = std::isnan(d) ? INFINITY : std::max(worst, d);
  }
  errors.out = worst / scale;

  // ---- commit, the host model, the cursors ----
  accepted_.upload(bytes_of(accepted));
  launch_commit(stream_.get());
  stream_.synchronize();
  const std::size_t SS = std::size_t(spec_.dk) * spec_.dv;
  for (int b = 0; b < B; ++b) {
    const int a = accepted[b];
    if (a < 0) continue;
    const ReplayCursor before{base_[b], len_[b]};
    errors.folded |= replay_folds(before, K, spec_.log);
    const ReplayCursor committed = replay_commit(before, a, K, spec_.log);
    base_[b] = committed.base;
    len_[b] = committed.len;
    if (a == 0) continue;
    for (int vh = 0; vh < HV; ++vh) {
      const double* after = ref.states.data() + ((std::size_t(b) * K + (a - 1)) * HV + vh) * SS;
      std::copy(after, after + SS, exact_.begin() + (std::size_t(b) * HV + vh) * SS);
    }
  }
  folds_ += errors.folded ? 1 : 0;
  const std::vector<int> cursor = values_of<int>(cursor_.download());
  for (int b = 0; b < B; ++b) {
    if (cursor[2 * b] != base_[b] || cursor[2 * b + 1] != len_[b]) {
      throw std::runtime_error("sequence " + std::to_string(b) + ": cursor {" +
                               std::to_string(cursor[2 * b]) + ", " +
                               std::to_string(cursor[2 * b + 1]) + "}, expected {" +
                               std::to_string(base_[b]) + ", " + std::to_string(len_[b]) + "}");
    }
  }
  if (materialize) {
    const std::vector<double> state = materialize_host();
    double s_scale = 0.0, s_worst = 0.0;
    for (std::size_t e = 0; e < state.size(); ++e) {
      s_scale = std::max(s_scale, std::abs(exact_[e]));
      const double d = std::abs(state[e] - exact_[e]);
      s_worst = std::isnan(d) ? INFINITY : std::max(s_worst, d);
    }
    errors.state = s_worst / s_scale;
  }
  return errors;
}

std::vector<std::uint8_t> ReplayRig::outputs() const { return out_.download(); }
std::vector<std::uint8_t> ReplayRig::checkpoints() const { return state_.download(); }
std::vector<std::uint8_t> ReplayRig::logs() const { return log_.download(); }

}  // namespace wyjit::test
