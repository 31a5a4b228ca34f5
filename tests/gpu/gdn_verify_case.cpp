// SPDX-License-Identifier: Apache-2.0
#include "gpu/gdn_verify_case.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <optional>

#include "common/gdn_reference.hpp"
#include "gpu/gdn_verify_buffers.hpp"
#include "gpu/gpu_support.hpp"
#include "wyjit/gdn_verify.hpp"

namespace wyjit::test {

namespace {

// Where each state tile lives: element offsets into one host image, or nullopt when the launch
// must not write it (a padded sequence or a skipped state).
struct StateMap {
  HostTensor* image = nullptr;
  std::vector<std::optional<std::size_t>> read;   // [b]
  std::vector<std::optional<std::size_t>> write;  // [b*K + t]
};

}  // namespace

std::string describe(const VerifyCase& c) {
  return format_spec(c.spec) + " batch=" + std::to_string(c.batch) + " hk=" + std::to_string(c.hk) +
         " hv=" + std::to_string(c.hv) + (c.padded ? " padded" : " dense") +
         " seed=" + std::to_string(c.seed);
}

VerifyResult run_verify_case(const VerifyCase& c) {
  const KernelSpec& s = c.spec;
  const int K = s.k;
  const int dk = s.dk;
  const int dv = s.dv;
  const IoType st = io_type(s.state);
  GdnProblem problem = make_random_problem(
      GdnShape{c.batch, c.hk, c.hv, K, dk, dv, s.l2norm_qk, s.fused_gating}, io_type(s.io), c.seed);
  for (float& x : problem.state0) x = round_to_io(x, st);  // the kernel reads the stored type
  const GdnReference ref = gdn_reference(problem);

  GdnVerifyInputs inputs(problem, s, c.padded);
  GdnVerifyArgs args = inputs.args();
  const std::int64_t pad = c.padded ? 1 : 0;
  const std::size_t tile = static_cast<std::size_t>(c.hv) * dk * dv;
  const bool pad_sequences = c.padded && c.batch >= 3 && s.addressing != Addressing::strided;

  // ---- state storage for the addressing mode, poisoned, S0 filled ----
  StateMap map;
  map.read.resize(c.batch);
  map.write.resize(static_cast<std::size_t>(c.batch) * K);
  std::size_t image_elems = 0;
  std::vector<std::int32_t> read_slot, write_slot;
  switch (s.addressing) {
    case Addressing::strided:
    case Addressing::table: {
      args.state_seq_stride = static_cast<std::int64_t>(tile) + 64 * pad;
      args.inter_tok_stride = static_cast<std::int64_t>(tile) + 32 * pad;
      args.inter_seq_stride = (K - 1) * args.inter_tok_stride + 16 * pad;
      // One image: the states first, then the intermediate states.
      const std::size_t inter_base = static_cast<std::size_t>(c.batch) * args.state_seq_stride;
      image_elems = inter_base + static_cast<std::size_t>(c.batch) * args.inter_seq_stride;
      for (int b = 0; b < c.batch; ++b) {
        const bool padded_seq = pad_sequences && b == 1;
        const std::size_t s0 = b * args.state_seq_stride;
        map.read[b] = s0;
        for (int t = 0; t < K; ++t) {
          const std::size_t at =
              t == K - 1 ? s0 : inter_base + b * args.inter_seq_stride + t * args.inter_tok_stride;
          const bool skipped = padded_seq || (pad_sequences && b == 0 && t == 0 && K > 1);
          if (!skipped) map.write[b * K + t] = at;
        }
        if (padded_seq) map.read[b].reset();
      }
      break;
    }
    case Addressing::slot: {
      args.slot_stride = static_cast<std::int64_t>(tile) + 64 * pad;
      args.num_slots = c.batch * (K + 1) + 1;
      args.write_slot_stride = K + 2 * pad;
      image_elems = static_cast<std::size_t>(args.num_slots) * args.slot_stride;
      // A fixed shuffle of the slots, so no sequence's slots are in order.
      std::vector<std::int32_t> perm(static_cast<std::size_t>(args.num_slots));
      std::iota(perm.begin(), perm.end(), 0);
      for (std::size_t i = 0; i < perm.size(); ++i)
        std::swap(perm[i], perm[(i * 7 + 3) % perm.size()]);
      read_slot.assign(c.batch, -1);
      write_slot.assign(static_cast<std::size_t>(c.batch) * args.write_slot_stride, -7);
      for (int b = 0; b < c.batch; ++b) {
        const bool padded_seq = pad_sequences && b == 1;
        read_slot[b] = padded_seq ? -1 : perm[b];
        if (!padded_seq) map.read[b] = static_cast<std::size_t>(perm[b]) * args.slot_stride;
        for (int t = 0; t < K; ++t) {
          const std::int32_t slot = perm[c.batch + b * K + t];
          const bool skipped = pad_sequences && b == 0 && t == 0 && K > 1;
          write_slot[b * args.write_slot_stride + t] = skipped ? -1 : slot;
          if (!padded_seq && !skipped) map.write[b * K + t] = slot * args.slot_stride;
        }
      }
      break;
    }
  }
  HostTensor image(st, image_elems);
  map.image = &image;
  for (int b = 0; b < c.batch; ++b) {
    // Padded sequences get a state too (where strided/table would read it): it must survive.
    const std::size_t base =
        s.addressing == Addressing::slot
            ? static_cast<std::size_t>(std::max(read_slot[b], 0)) * args.slot_stride
            : b * args.state_seq_stride;
    if (s.addressing == Addressing::slot && read_slot[b] < 0) continue;
    for (int h = 0; h < c.hv; ++h) {
      for (int i = 0; i < dk; ++i) {
        for (int j = 0; j < dv; ++j) {
          const std::size_t canonical = ((std::size_t(b) * c.hv + h) * dk + i) * dv + j;
          image.set(base + h * std::size_t(dk) * dv + state_offset(s.layout, dk, dv, i, j),
                    problem.state0[canonical]);
        }
      }
    }
  }
  const std::vector<std::uint8_t> image_before = image.bytes;

  // ---- device ----
  DeviceBuffer d_image(image.bytes.size());
  d_image.upload(image.bytes);
  const CUdeviceptr base = d_image.address();
  const std::size_t elem = io_size(st);
  std::optional<DeviceBuffer> d_tables, d_read, d_write;
  switch (s.addressing) {
    case Addressing::strided:
      args.state = d_image.get();
      args.inter =
          K > 1 ? reinterpret_cast<void*>(base + c.batch * args.state_seq_stride * elem) : nullptr;
      break;
    case Addressing::table: {
      args.slab_stride = c.batch + pad;
      std::vector<std::uint64_t> table(static_cast<std::size_t>(K * args.slab_stride), 0);
      for (int b = 0; b < c.batch; ++b) {
        if (map.read[b]) table[b] = base + *map.read[b] * elem;
        for (int t = 0; t + 1 < K; ++t) {
          if (map.write[b * K + t])
            table[(1 + t) * args.slab_stride + b] = base + *map.write[b * K + t] * elem;
        }
      }
      d_tables.emplace(table.size() * sizeof(std::uint64_t));
      d_tables->upload(as_bytes(table));
      args.tables = static_cast<void* const*>(d_tables->get());
      break;
    }
    case Addressing::slot:
      args.state = d_image.get();
      d_read.emplace(read_slot.size() * sizeof(std::int32_t));
      d_read->upload(as_bytes(read_slot));
      d_write.emplace(write_slot.size() * sizeof(std::int32_t));
      d_write->upload(as_bytes(write_slot));
      args.read_slot = static_cast<const std::int32_t*>(d_read->get());
      args.write_slot = static_cast<const std::int32_t*>(d_write->get());
      break;
  }

  const Kernel kernel = test_jit().kernel(s);
  launch_gdn_verify(kernel, args, nullptr);
  WYJIT_CU_CHECK(cuCtxSynchronize());
  image.bytes = d_image.download();
  const HostTensor out = inputs.download_out();

  // ---- compare with the reference ----
  const double out_tol = s.io == DType::f32 ? 1e-5 : 1e-2;
  const double state_tol = s.state == DType::bf16  ? 1e-2
                           : s.state == DType::f16 ? 2e-3
                           : s.io == DType::f32    ? 1e-5
                                                   : 1e-4;
  VerifyResult result;
  const std::size_t rows = static_cast<std::size_t>(c.batch) * K;
  const std::size_t row_elems = static_cast<std::size_t>(c.hv) * dv;
  ComparisonAccumulator out_cmp;
  result.out_rows.resize(rows);
  std::size_t stray = 0;
  for (std::size_t r = 0; r < rows; ++r) {
    const bool padded_seq = !map.read[r / K].has_value();
    for (std::size_t j = 0; j < static_cast<std::size_t>(args.o_stride); ++j) {
      const float x = out.get(r * args.o_stride + j);
      if (padded_seq || j >= row_elems) {
        stray += std::isnan(x) ? 0 : 1;  // padding and padded sequences keep their poison
      } else {
        out_cmp.add(ref.out[r * row_elems + j], x);
      }
    }
    if (!padded_seq) {
      const auto* row = out.bytes.data() + r * args.o_stride * io_size(out.type);
      result.out_rows[r].assign(row, row + row_elems * io_size(out.type));
    }
  }
  result.checks.push_back({"out", out_cmp.finish(), out_tol});

  result.state_bytes.resize(rows);
  for (int t = 0; t < K; ++t) {
    ComparisonAccumulator cmp;
    for (int b = 0; b < c.batch; ++b) {
      const auto& at = map.write[b * K + t];
      if (!at) continue;
      const auto* bytes = image.bytes.data() + *at * elem;
      result.state_bytes[b * K + t].assign(bytes, bytes + tile * elem);
      for (int h = 0; h < c.hv; ++h) {
        for (int i = 0; i < dk; ++i) {
          for (int j = 0; j < dv; ++j) {
            cmp.add(
                ref.states[(((std::size_t(b) * K + t) * c.hv + h) * dk + i) * dv + j],
                image.get(*at + h * std::size_t(dk) * dv + state_offset(s.layout, dk, dv, i, j)));
          }
        }
      }
    }
    if (cmp.finish().count > 0) {
      result.checks.push_back(
          {t == K - 1 ? "final state" : "state after token " + std::to_string(t), cmp.finish(),
           state_tol});
    }
  }

  // ---- every byte of the state image outside the written tiles is unchanged ----
  std::vector<bool> written(image_elems, false);
  for (const auto& at : map.write) {
    if (at)
      std::fill(written.begin() + static_cast<std::ptrdiff_t>(*at),
                written.begin() + static_cast<std::ptrdiff_t>(*at + tile), true);
  }
  for (std::size_t e = 0; e < image_elems; ++e) {
    if (written[e]) continue;
    stray += std::equal(image.bytes.begin() + e * elem, image.bytes.begin() + (e + 1) * elem,
                        image_before.begin() + e * elem)
                 ? 0
                 : 1;
  }
  result.checks.push_back(
      {"elements written outside outputs and states", count_comparison(stray), 0.0});
  return result;
}

}  // namespace wyjit::test
