// SPDX-License-Identifier: Apache-2.0
#include "gpu/graph_support.hpp"

#include <algorithm>
#include <cmath>
#include <exception>
#include <limits>
#include <numeric>
#include <random>
#include <stdexcept>

#include "driver/driver_api.hpp"
#include "gpu/gdn_verify_buffers.hpp"
#include "wyjit/error.hpp"

namespace wyjit::test {

namespace {

constexpr float kPoison = std::numeric_limits<float>::quiet_NaN();

std::vector<std::uint8_t> poisoned(std::size_t count, IoType type) {
  const std::vector<float> nan(count, kPoison);
  return pack_io(nan, type);
}

void upload_async(const DeviceBuffer& dst, const std::vector<std::uint8_t>& src, CUstream stream) {
  if (src.size() != dst.bytes()) {
    throw std::runtime_error("upload of " + std::to_string(src.size()) +
                             " bytes into a buffer of " + std::to_string(dst.bytes()));
  }
  WYJIT_CU_CHECK(cuMemcpyHtoDAsync(dst.address(), src.data(), src.size(), stream));
}

}  // namespace

int device_count() {
  if (!detail::driver_has_device()) return 0;
  int count = 0;
  WYJIT_CU_CHECK(cuDeviceGetCount(&count));
  return count;
}

bool addressing_supported(Addressing addressing) {
  try {
    validate_spec(KernelSpec{.addressing = addressing});
    return true;
  } catch (const Error&) {
    return false;
  }
}

// ---- ScopedDevice, Stream, CapturedGraph ----------------------------------------------------

ScopedDevice::ScopedDevice(int ordinal) {
  // NOTE: first mark this thread's default context as done, so DeviceBuffer's
  // make_context_current() never switches back to device 0 inside the scope.
  make_context_current();
  WYJIT_CU_CHECK(cuCtxGetCurrent(&previous_));
  CUdevice device = 0;
  WYJIT_CU_CHECK(cuDeviceGet(&device, ordinal));
  WYJIT_CU_CHECK(cuDevicePrimaryCtxRetain(&context_, device));
  WYJIT_CU_CHECK(cuCtxSetCurrent(context_));
}

ScopedDevice::~ScopedDevice() { detail::driver().cuCtxSetCurrent(previous_); }

Stream::Stream() { WYJIT_CU_CHECK(cuStreamCreate(&stream_, CU_STREAM_NON_BLOCKING)); }

Stream::~Stream() {
  if (stream_ != nullptr) detail::driver().cuStreamDestroy(stream_);
}

void Stream::synchronize() const { WYJIT_CU_CHECK(cuStreamSynchronize(stream_)); }

CapturedGraph::CapturedGraph(CUstream stream, const std::function<void()>& record) {
  WYJIT_CU_CHECK(cuStreamBeginCapture(stream, CU_STREAM_CAPTURE_MODE_GLOBAL));
  try {
    record();
  } catch (...) {
    CUgraph abandoned = nullptr;
    detail::driver().cuStreamEndCapture(stream, &abandoned);
    if (abandoned != nullptr) detail::driver().cuGraphDestroy(abandoned);
    throw;
  }
  WYJIT_CU_CHECK(cuStreamEndCapture(stream, &graph_));
  const CUresult made = detail::driver().cuGraphInstantiateWithFlags(&exec_, graph_, 0);
  if (made != CUDA_SUCCESS) {
    detail::driver().cuGraphDestroy(graph_);
    detail::throw_cu_error(__FILE__, __LINE__, "cuGraphInstantiateWithFlags", made);
  }
}

CapturedGraph::~CapturedGraph() {
  if (exec_ != nullptr) detail::driver().cuGraphExecDestroy(exec_);
  if (graph_ != nullptr) detail::driver().cuGraphDestroy(graph_);
}

void CapturedGraph::launch(CUstream stream) const { WYJIT_CU_CHECK(cuGraphLaunch(exec_, stream)); }

// ---- VerifyRig -------------------------------------------------------------------------------

VerifyRig::VerifyRig(const KernelSpec& spec, int batch, int hk, int hv)
    : spec_(spec), batch_(batch), hk_(hk), hv_(hv) {
  const int K = spec.k;
  const IoType io = io_type(spec.io);
  const std::size_t io_bytes = io_size(io);
  const std::size_t rows = static_cast<std::size_t>(batch) * K;
  tile_ = static_cast<std::size_t>(hv) * spec.dk * spec.dv;
  switch (spec.addressing) {
    case Addressing::strided:
      pool_tiles_ = rows;
      break;
    case Addressing::table:
      pool_tiles_ = 2 * rows;
      break;
    case Addressing::slot:
      pool_tiles_ = static_cast<std::size_t>(batch) * (K + 1) + 2;
      break;
  }

  args_.batch = batch;
  args_.num_k_heads = hk;
  args_.num_v_heads = hv;
  args_.k = K;
  args_.dk = spec.dk;
  args_.dv = spec.dv;
  // The scale make_random_problem gives the reference (captured graphs bake it in).
  args_.scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(spec.dk)));
  args_.qk_stride = std::int64_t{hk} * spec.dk;
  args_.v_stride = std::int64_t{hv} * spec.dv;
  args_.gb_stride = hv;
  args_.o_stride = std::int64_t{hv} * spec.dv;

  // ---- token inputs: q, k, v, then g, beta or a, b, a_log, dt_bias ----
  inputs_.reserve(7);
  inputs_.emplace_back(rows * args_.qk_stride * io_bytes);
  inputs_.emplace_back(rows * args_.qk_stride * io_bytes);
  inputs_.emplace_back(rows * args_.v_stride * io_bytes);
  args_.q = inputs_[0].get();
  args_.k_in = inputs_[1].get();
  args_.v = inputs_[2].get();
  if (spec.fused_gating) {
    inputs_.emplace_back(rows * hv * io_bytes);
    inputs_.emplace_back(rows * hv * io_bytes);
    inputs_.emplace_back(hv * sizeof(float));
    inputs_.emplace_back(hv * sizeof(float));
    args_.a = inputs_[3].get();
    args_.b = inputs_[4].get();
    args_.a_log = static_cast<const float*>(inputs_[5].get());
    args_.dt_bias = static_cast<const float*>(inputs_[6].get());
  } else {
    inputs_.emplace_back(rows * hv * sizeof(float));
    inputs_.emplace_back(rows * hv * sizeof(float));
    args_.g = static_cast<const float*>(inputs_[3].get());
    args_.beta = static_cast<const float*>(inputs_[4].get());
  }
  out_.emplace(rows * args_.o_stride * io_bytes);
  args_.out = out_->get();

  // ---- states ----
  const std::size_t st_bytes = io_size(io_type(spec.state));
  pool_.emplace(pool_tiles_ * tile_ * st_bytes);
  switch (spec.addressing) {
    case Addressing::strided:
      args_.state = pool_->get();
      args_.state_seq_stride = static_cast<std::int64_t>(tile_);
      if (K > 1) {
        args_.inter = reinterpret_cast<void*>(pool_->address() + tile_index_bytes(batch));
        args_.inter_seq_stride = static_cast<std::int64_t>(tile_);
        args_.inter_tok_stride = static_cast<std::int64_t>(tile_) * batch;
      }
      break;
    case Addressing::table:
      stager_.emplace(K, batch);
      args_.tables = stager_->device_tables();
      args_.slab_stride = stager_->slab_stride();
      break;
    case Addressing::slot:
      args_.state = pool_->get();
      args_.slot_stride = static_cast<std::int64_t>(tile_);
      args_.num_slots = static_cast<std::int32_t>(pool_tiles_);
      args_.write_slot_stride = K + 1;  // one padding column the kernel must ignore
      read_slot_.emplace(static_cast<std::size_t>(batch) * sizeof(std::int32_t));
      write_slot_.emplace(static_cast<std::size_t>(batch) * (K + 1) * sizeof(std::int32_t));
      args_.read_slot = static_cast<const std::int32_t*>(read_slot_->get());
      args_.write_slot = static_cast<const std::int32_t*>(write_slot_->get());
      break;
  }
}

std::size_t VerifyRig::tile_index_bytes(std::size_t tile) const {
  return tile * tile_ * io_size(io_type(spec_.state));
}

void VerifyRig::prepare(std::uint64_t seed, CUstream stream, int padded) {
  const int K = spec_.k;
  const int dk = spec_.dk;
  const int dv = spec_.dv;
  if (padded < 0 || padded >= batch_ || (padded > 0 && spec_.addressing == Addressing::strided)) {
    throw std::invalid_argument("VerifyRig::prepare: padded is " + std::to_string(padded) +
                                " for batch " + std::to_string(batch_) + " and " +
                                to_string(spec_.addressing) + " addressing");
  }
  seed_ = seed;
  padded_ = padded;
  const int active = batch_ - padded;
  const IoType io = io_type(spec_.io);
  const IoType st = io_type(spec_.state);

  GdnProblem problem = make_random_problem(
      GdnShape{batch_, hk_, hv_, K, dk, dv, spec_.l2norm_qk, spec_.fused_gating}, io, seed);
  for (float& x : problem.state0) x = round_to_io(x, st);  // the kernel reads the stored type
  reference_ = gdn_reference(problem);

  // ---- inputs and the poisoned output ----
  input_images_.clear();
  input_images_.push_back(pack_io(problem.q, io));
  input_images_.push_back(pack_io(problem.k_in, io));
  input_images_.push_back(pack_io(problem.v, io));
  if (spec_.fused_gating) {
    input_images_.push_back(pack_io(problem.a, io));
    input_images_.push_back(pack_io(problem.b, io));
    input_images_.push_back(pack_io(problem.a_log, IoType::f32));
    input_images_.push_back(pack_io(problem.dt_bias, IoType::f32));
  } else {
    input_images_.push_back(pack_io(problem.g, IoType::f32));
    input_images_.push_back(pack_io(problem.beta, IoType::f32));
  }
  for (std::size_t i = 0; i < inputs_.size(); ++i)
    upload_async(inputs_[i], input_images_[i], stream);
  out_image_ = poisoned(static_cast<std::size_t>(batch_) * K * args_.o_stride, io);
  upload_async(*out_, out_image_, stream);

  // ---- where each sequence's states go ----
  std::vector<std::size_t> perm(pool_tiles_);
  std::iota(perm.begin(), perm.end(), std::size_t{0});
  std::mt19937_64 rng(seed * 0x9e3779b97f4a7c15ull + 17);
  std::shuffle(perm.begin(), perm.end(), rng);
  read_at_.assign(batch_, std::nullopt);
  write_at_.assign(static_cast<std::size_t>(batch_) * K, std::nullopt);
  switch (spec_.addressing) {
    case Addressing::strided:
      for (int b = 0; b < batch_; ++b) {
        read_at_[b] = b;
        for (int t = 0; t < K; ++t) {
          write_at_[b * K + t] = t == K - 1 ? b : batch_ + static_cast<std::size_t>(t) * batch_ + b;
        }
      }
      break;
    case Addressing::table:
      for (int b = 0; b < active; ++b) {
        read_at_[b] = perm[b];
        for (int t = 0; t + 1 < K; ++t) write_at_[b * K + t] = perm[batch_ + b * (K - 1) + t];
        write_at_[b * K + K - 1] = perm[b];
      }
      break;
    case Addressing::slot: {
      const std::size_t spare = static_cast<std::size_t>(batch_) * (K + 1);  // unused slot
      read_slots_.assign(batch_, -1);
      write_slots_.assign(static_cast<std::size_t>(batch_) * (K + 1), -1);
      for (int b = 0; b < batch_; ++b) {
        const bool is_padding = b >= active;
        read_slots_[b] = is_padding ? -1 : static_cast<std::int32_t>(perm[b]);
        if (!is_padding) read_at_[b] = perm[b];
        for (int t = 0; t < K; ++t) {
          const std::size_t slot = perm[batch_ + static_cast<std::size_t>(b) * K + t];
          const bool skipped = b == 0 && t == 0 && K > 1;
          write_slots_[b * (K + 1) + t] = skipped ? -1 : static_cast<std::int32_t>(slot);
          if (!is_padding && !skipped) write_at_[b * K + t] = slot;
        }
        // The padding column names a real slot: a kernel reading it would write there.
        write_slots_[b * (K + 1) + K] = static_cast<std::int32_t>(perm[spare]);
      }
      upload_async(*read_slot_, as_bytes(read_slots_), stream);
      upload_async(*write_slot_, as_bytes(write_slots_), stream);
      break;
    }
  }

  // ---- the pool: poisoned, S0 of each active sequence in its read tile ----
  pool_image_ = poisoned(pool_tiles_ * tile_, st);
  for (int b = 0; b < batch_; ++b) {
    if (!read_at_[b]) continue;
    const std::size_t base = *read_at_[b] * tile_;
    for (int h = 0; h < hv_; ++h) {
      for (int i = 0; i < dk; ++i) {
        for (int j = 0; j < dv; ++j) {
          const std::size_t canonical = ((std::size_t(b) * hv_ + h) * dk + i) * dv + j;
          store_io(pool_image_.data(),
                   base + h * std::size_t(dk) * dv + state_offset(spec_.layout, dk, dv, i, j),
                   problem.state0[canonical], st);
        }
      }
    }
  }
  upload_async(*pool_, pool_image_, stream);

  // ---- table: stage this prepare's scatter (padding sequences are not staged: null) ----
  if (spec_.addressing == Addressing::table) {
    const CUdeviceptr base = pool_->address();
    staged_states_.assign(active, nullptr);
    staged_inter_.assign(K - 1, std::vector<void*>(active, nullptr));
    staged_inter_rows_.clear();
    for (int b = 0; b < active; ++b) {
      staged_states_[b] = reinterpret_cast<void*>(base + tile_index_bytes(*read_at_[b]));
      for (int t = 0; t + 1 < K; ++t) {
        staged_inter_[t][b] =
            reinterpret_cast<void*>(base + tile_index_bytes(*write_at_[b * K + t]));
      }
    }
    for (const auto& row : staged_inter_) staged_inter_rows_.push_back(row.data());
    stager_->stage(staged_states_.data(), K > 1 ? staged_inter_rows_.data() : nullptr, active,
                   stream);
  }
}

std::vector<RigCheck> VerifyRig::check() const {
  const int K = spec_.k;
  const int dk = spec_.dk;
  const int dv = spec_.dv;
  const IoType io = io_type(spec_.io);
  const IoType st = io_type(spec_.state);
  const std::vector<std::uint8_t> out = out_->download();
  const std::vector<std::uint8_t> pool = pool_->download();

  const double out_tol = spec_.io == DType::f32 ? 1e-5 : 1e-2;
  const double state_tol = spec_.state == DType::bf16  ? 1e-2
                           : spec_.state == DType::f16 ? 2e-3
                           : spec_.io == DType::f32    ? 1e-5
                                                       : 1e-4;
  std::vector<RigCheck> checks;
  std::size_t stray = 0;

  // ---- outputs; padding sequences keep their poison ----
  const std::size_t rows = static_cast<std::size_t>(batch_) * K;
  const std::size_t row_elems = static_cast<std::size_t>(hv_) * dv;
  std::vector<double> expected, actual;
  for (std::size_t r = 0; r < rows; ++r) {
    const bool is_padding = !read_at_[r / K].has_value();
    for (std::size_t j = 0; j < row_elems; ++j) {
      const float x = load_io(out.data(), r * args_.o_stride + j, io);
      if (is_padding) {
        stray += std::isnan(x) ? 0 : 1;
      } else {
        expected.push_back(reference_.out[r * row_elems + j]);
        actual.push_back(x);
      }
    }
  }
  checks.push_back({"out", compare(expected, actual), out_tol});

  // ---- every state the launch had to write ----
  for (int t = 0; t < K; ++t) {
    expected.clear();
    actual.clear();
    for (int b = 0; b < batch_; ++b) {
      const auto& at = write_at_[b * K + t];
      if (!at) continue;
      for (int h = 0; h < hv_; ++h) {
        for (int i = 0; i < dk; ++i) {
          for (int j = 0; j < dv; ++j) {
            expected.push_back(
                reference_.states[(((std::size_t(b) * K + t) * hv_ + h) * dk + i) * dv + j]);
            actual.push_back(load_io(
                pool.data(),
                *at * tile_ + h * std::size_t(dk) * dv + state_offset(spec_.layout, dk, dv, i, j),
                st));
          }
        }
      }
    }
    if (!expected.empty()) {
      checks.push_back({t == K - 1 ? "final state" : "state after token " + std::to_string(t),
                        compare(expected, actual), state_tol});
    }
  }

  // ---- the rest of the pool is exactly as uploaded ----
  std::vector<bool> written(pool_tiles_, false);
  for (const auto& at : write_at_) {
    if (at) written[*at] = true;
  }
  const std::size_t tile_bytes = tile_ * io_size(st);
  for (std::size_t p = 0; p < pool_tiles_; ++p) {
    if (written[p]) continue;
    for (std::size_t x = p * tile_bytes; x < (p + 1) * tile_bytes; ++x) {
      stray += pool[x] != pool_image_[x] ? 1 : 0;
    }
  }
  checks.push_back({"elements written where nothing may be", count_comparison(stray), 0.0});
  return checks;
}

std::vector<std::uint8_t> VerifyRig::output_bytes() const { return out_->download(); }

std::string VerifyRig::describe() const {
  return format_spec(spec_) + " batch=" + std::to_string(batch_) + " hk=" + std::to_string(hk_) +
         " hv=" + std::to_string(hv_) + " padded=" + std::to_string(padded_) +
         " seed=" + std::to_string(seed_);
}

std::string failure_of(const std::function<void()>& body) {
  try {
    body();
    return {};
  } catch (const std::exception& e) {
    return e.what();
  } catch (...) {
    return "unknown exception";
  }
}

}  // namespace wyjit::test
