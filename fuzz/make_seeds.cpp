// SPDX-License-Identifier: Apache-2.0
// Writes the seed corpora of the fuzz targets (fuzz/corpus/<target>/); fuzz/make-corpus.sh runs
// it. Usage: wyjit_fuzz_seeds CORPUS_DIR [ENTRY_ROOT]
//
// The spec, CLI and C API seeds are built here from the families' field tables and the argument
// layouts, and each C API seed with valid arguments is checked to pass (so the target starts from
// the accepting path of every check). With ENTRY_ROOT (a cache root `wyjit precompile` filled),
// its entry files become the entry_decode seeds; an entry over kMaxSeedBytes keeps its real
// header and the first bytes of its payload, re-encoded so that it still decodes.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <tuple>
#include <utility>
#include <variant>
#include <vector>

#include "cache/entry_file.hpp"
#include "capi_check_input.hpp"
#include "spec/field_values.hpp"
#include "wyjit/spec.hpp"
#include "wyjit/wyjit.h"

namespace {

namespace fs = std::filesystem;
using Bytes = std::vector<std::uint8_t>;
using Fields = std::vector<std::pair<std::string, std::string>>;

// NOTE: seeds stay small so that the corpus is cheap to keep in git and quick to mutate.
constexpr std::size_t kMaxSeedBytes = 64 * 1024;

void write(const fs::path& dir, const std::string& name, std::span<const std::uint8_t> bytes) {
  fs::create_directories(dir);
  std::ofstream out(dir / name, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()),
            static_cast<std::streamsize>(bytes.size()));
  if (!out) throw std::runtime_error("cannot write " + (dir / name).string());
}

// A seed of a target whose input is one mode byte and text.
void write_text(const fs::path& dir, const std::string& name, std::uint8_t mode,
                const std::string& text) {
  Bytes bytes = {mode};
  bytes.insert(bytes.end(), text.begin(), text.end());
  write(dir, name, bytes);
}

// Arguments as the CLI target reads them: separated by NUL bytes.
std::string argv_text(const std::vector<std::string>& args) {
  std::string out;
  for (std::size_t i = 0; i < args.size(); ++i)
    out += (i == 0 ? "" : std::string(1, '\0')) + args[i];
  return out;
}

std::uint8_t family_index(std::string_view family) {
  const auto all = wyjit::detail::families();
  for (std::size_t i = 0; i < all.size(); ++i) {
    if (all[i]->name() == family) return static_cast<std::uint8_t>(i);
  }
  throw std::runtime_error("no family " + std::string(family));
}

void spec_name_seeds(const fs::path& dir) {
  // Names: a few of the standard matrix per family, and variants off it.
  int n = 0;
  const std::vector<wyjit::KernelSpec> standard = wyjit::standard_matrix();
  for (std::size_t i = 0; i < standard.size(); i += 23) {
    write_text(dir, "name-" + std::to_string(n++), 0, wyjit::format_spec(standard[i]));
  }
  const std::vector<std::pair<std::string, Fields>> off = {
      {"gdn_verify", {{"layout", "kv"}, {"dk", "64"}, {"dv", "256"}, {"l2norm", "on"}}},
      {"gdn_verify", {{"state", "bf16"}, {"gating", "on"}, {"k", "32"}}},
      {"conv1d_update", {{"weight", "f32"}, {"bias", "on"}, {"silu", "off"}, {"width", "2"}}},
      {"gdn_replay", {{"k", "16"}, {"log", "32"}, {"layout", "kv"}, {"dk", "64"}}},
      {"gdn_replay", {{"gating", "on"}, {"l2norm", "off"}, {"state", "f16"}}},
  };
  for (const auto& [family, fields] : off) {
    write_text(dir, "name-" + std::to_string(n++), 0,
               wyjit::format_spec(wyjit::make_spec(family, fields)));
  }
  for (const char* bad : {"gdn_verify.k4.io_bf16.st_f32.strided.vk.dk128.dv128",
                          "gdn_verify.k04.io_bf16.st_f32.strided.vk.d128", "conv1d_update",
                          "gdn_replay.k9.l16.io_bf16.st_f32.strided.vk.d128.l2norm"}) {
    write_text(dir, "name-bad-" + std::to_string(n++), 0, bad);
  }
  // Value lists: family byte, field byte, list.
  const std::vector<std::tuple<std::string, std::string, std::string>> lists = {
      {"gdn_verify", "k", "1-17,32"},        {"gdn_verify", "io", "f32,bf16"},
      {"gdn_verify", "dk", "64,256"},        {"gdn_verify", "l2norm", "on,off"},
      {"conv1d_update", "weight", "io,f32"}, {"conv1d_update", "width", "2-8"},
      {"gdn_replay", "log", "8,64"},         {"gdn_replay", "k", "3-5,1"},
  };
  for (const auto& [family, field, list] : lists) {
    const wyjit::detail::Family& f = *wyjit::detail::find_family(family);
    const std::string text = std::string(1, static_cast<char>(family_index(family))) +
                             static_cast<char>(wyjit::detail::field_index(f, field)) + list;
    write_text(dir, "list-" + family + "-" + field, 1, text);
  }
  // make_spec: family byte, field=value lines.
  const std::vector<std::pair<std::string, std::string>> makes = {
      {"gdn_verify", "k=8\nio=f16\naddressing=slot"},
      {"conv1d_update", "weight=io\nio=f32\nrollback=window"},
      {"gdn_replay", "k=4\nlog=8\ngating=on"},
      {"gdn_replay", "k=8\nlog=8"},
  };
  for (std::size_t i = 0; i < makes.size(); ++i) {
    write_text(dir, "make-" + std::to_string(i), 2,
               std::string(1, static_cast<char>(family_index(makes[i].first))) + makes[i].second);
  }
  for (const char* target : {"sm_80", "sm_90", "sm_90a", "compute_90", "sm_100a"}) {
    write_text(dir, std::string("target-") + target, 3, target);
  }
}

void cli_seeds(const fs::path& dir) {
  const std::vector<std::vector<std::string>> precompile = {
      {"--arch", "sm_90", "--all"},
      {"--arch=sm_90,compute_90", "--k", "1-4,8", "--io", "bf16"},
      {"--arch", "sm_80", "--family", "conv1d_update", "--rollback", "window", "--bias"},
      {"--arch", "sm_90a", "--set", "k=2", "--set", "log=8", "-j2", "--json"},
      {"--arch", "sm_90", "--family=gdn_verify,gdn_replay", "--set=dk=64", "--gating", "on"},
      {"--arch", "sm_90", "--cache-dir", "/tmp/x", "--weight", "io,f32", "--jobs=3"},
  };
  for (std::size_t i = 0; i < precompile.size(); ++i) {
    write_text(dir, "precompile-" + std::to_string(i), 0, argv_text(precompile[i]));
  }
  for (const char* size : {"512M", "1G", "1073741824", "4KiB", "0", "16tib"}) {
    write_text(dir, std::string("bytes-") + size, 1, size);
  }
  const std::vector<std::vector<std::string>> compile = {
      {"gdn_verify.k4.io_bf16.st_f32.strided.vk.d128", "--arch", "sm_90", "--save-source"},
      {"--arch=sm_90", "--cache-dir", "dir", "-j4", "variant"},
  };
  for (std::size_t i = 0; i < compile.size(); ++i) {
    write_text(dir, "reader-" + std::to_string(i), 2, argv_text(compile[i]));
  }
}

// Fake, well-aligned device addresses: the checks never dereference them.
template <typename T = void>
T* fake(std::uintptr_t address) {
  return reinterpret_cast<T*>(address);
}

// Valid references in every mode at once (each check reads those of its variant's mode).
void fake_refs(wyjit_state_refs& r, std::uintptr_t base, std::int64_t tile, int batch, int writes) {
  r.state = fake(base);
  r.state_seq_stride = tile;
  r.inter = fake(base + 0x1000000);
  r.inter_tok_stride = tile;
  r.inter_seq_stride = std::max(writes - 1, 1) * tile;
  r.tables = fake<void* const>(base + 0x2000000);
  r.slab_stride = batch;
  r.slot_stride = tile;
  r.num_slots = batch + 1;
  r.read_slot = fake<const std::int32_t>(base + 0x3000000);
  r.write_slot = fake<const std::int32_t>(base + 0x4000000);
  r.write_slot_stride = std::max(writes, 1);
}

constexpr int kBatch = 3;
constexpr int kKeyHeads = 2;
constexpr int kValueHeads = 4;

// The token inputs of gdn_verify and gdn_replay's verify.
template <class Args>
void fake_tokens(Args& a, int k, int dk, int dv) {
  a.batch = kBatch;
  a.num_k_heads = kKeyHeads;
  a.num_v_heads = kValueHeads;
  a.k = k;
  a.dk = dk;
  a.dv = dv;
  a.scale = 0.125f;
  a.q = fake(0x10000);
  a.k_in = fake(0x20000);
  a.v = fake(0x30000);
  a.g = fake<const float>(0x40000);
  a.beta = fake<const float>(0x50000);
  a.a = fake(0x60000);
  a.b = fake(0x70000);
  a.a_log = fake<const float>(0x80000);
  a.dt_bias = fake<const float>(0x90000);
  a.out = fake(0xa0000);
  a.qk_stride = std::int64_t{kKeyHeads} * dk;
  a.v_stride = std::int64_t{kValueHeads} * dv;
  a.gb_stride = kValueHeads;
  a.o_stride = std::int64_t{kValueHeads} * dv;
}

// Valid arguments of check `check` for `spec`, as raw bytes of its struct.
Bytes valid_args(std::size_t check, const wyjit::KernelSpec& spec) {
  Bytes out(wyjit::fuzz::kChecks[check].args_size);
  wyjit::fuzz::kChecks[check].init(out.data());
  const auto as = [&](auto* args) { std::memcpy(args, out.data(), out.size()); };
  const auto done = [&](const auto& args) {
    std::memcpy(out.data(), &args, sizeof(args));
    return out;
  };
  if (const auto* s = std::get_if<wyjit::GdnVerifySpec>(&spec)) {
    wyjit_gdn_verify_args a;
    as(&a);
    fake_tokens(a, s->k, s->dk, s->dv);
    fake_refs(a.states, 0x1000000, std::int64_t{kValueHeads} * s->dk * s->dv, kBatch, s->k);
    return done(a);
  }
  if (const auto* s = std::get_if<wyjit::Conv1dUpdateSpec>(&spec)) {
    wyjit_conv1d_update_args a;
    as(&a);
    const bool window = s->rollback == wyjit::Rollback::window;
    a.batch = kBatch;
    a.channels = 96;
    a.k = s->k;
    a.width = s->width;
    a.x = fake(0x10000);
    a.y = fake(0x20000);
    a.x_stride = a.y_stride = 96;
    a.weight = fake(0x30000);
    a.bias = fake(0x40000);
    a.state_cols = s->width - 1 + (window ? s->k : 0);
    a.state_channel_stride = a.state_cols;
    a.state_col_stride = 1;
    fake_refs(a.states, 0x1000000, 96 * a.state_cols, kBatch, window ? 1 : s->k);
    a.window_offset = fake<const std::int32_t>(0x50000);
    return done(a);
  }
  const auto& s = std::get<wyjit::GdnReplaySpec>(spec);
  const std::int64_t tile = std::int64_t{kValueHeads} * s.dk * s.dv;
  const std::int64_t log =
      std::int64_t{s.log} * (std::int64_t{kKeyHeads} * s.dk + kValueHeads * (s.dv + 1));
  const auto* cursor = fake<std::int32_t>(0xb0000);
  switch (check) {
    case 2: {
      wyjit_gdn_replay_verify_args a;
      as(&a);
      fake_tokens(a, s.k, s.dk, s.dv);
      fake_refs(a.states, 0x1000000, tile, kBatch, 1);
      fake_refs(a.log, 0x10000000, log, kBatch, 0);
      a.cursor = cursor;
      a.cursor_stride = 2;
      return done(a);
    }
    case 3: {
      wyjit_gdn_replay_commit_args a;
      as(&a);
      a.batch = kBatch;
      a.k = s.k;
      a.cursor = const_cast<std::int32_t*>(cursor);
      a.cursor_stride = 2;
      a.accepted = fake<const std::int32_t>(0xc0000);
      return done(a);
    }
    default: {
      wyjit_gdn_replay_materialize_args a;
      as(&a);
      a.batch = kBatch;
      a.num_k_heads = kKeyHeads;
      a.num_v_heads = kValueHeads;
      a.dk = s.dk;
      a.dv = s.dv;
      fake_refs(a.states, 0x1000000, tile, kBatch, 0);
      fake_refs(a.log, 0x10000000, log, kBatch, 0);
      a.cursor = cursor;
      a.cursor_stride = 2;
      fake_refs(a.out, 0x20000000, tile, kBatch, 1);
      return done(a);
    }
  }
}

void capi_seeds(const fs::path& dir) {
  const std::vector<std::pair<std::string, std::vector<Fields>>> variants = {
      {"gdn_verify",
       {{},
        {{"k", "1"}, {"io", "f32"}, {"addressing", "table"}},
        {{"k", "17"}, {"io", "f16"}, {"addressing", "slot"}, {"state", "bf16"}},
        {{"layout", "kv"}, {"gating", "on"}, {"dk", "64"}, {"dv", "256"}}}},
      {"conv1d_update",
       {{},
        {{"k", "1"}, {"io", "f32"}, {"rollback", "window"}, {"addressing", "table"}},
        {{"k", "9"}, {"width", "2"}, {"addressing", "slot"}, {"bias", "on"}},
        {{"rollback", "window"}, {"addressing", "slot"}, {"weight", "f32"}}}},
      {"gdn_replay",
       {{},
        {{"k", "1"}, {"log", "8"}, {"addressing", "table"}, {"gating", "on"}},
        {{"k", "8"}, {"addressing", "slot"}, {"layout", "kv"}, {"state", "f16"}},
        {{"io", "f32"}, {"dk", "64"}, {"dv", "256"}}}},
  };
  for (std::size_t check = 0; check < wyjit::fuzz::kChecks.size(); ++check) {
    const wyjit::fuzz::CheckFn& fn = wyjit::fuzz::kChecks[check];
    for (const auto& [family, list] : variants) {
      if (family != fn.family) continue;
      for (std::size_t v = 0; v < list.size(); ++v) {
        const wyjit::KernelSpec spec = wyjit::make_spec(family, list[v]);
        const Bytes args = valid_args(check, spec);
        if (fn.check(wyjit::format_spec(spec).c_str(), args.data()) != WYJIT_OK) {
          throw std::runtime_error(std::string("seed arguments refused: ") + wyjit_last_error());
        }
        const std::string name = std::string(fn.name) + "-" + std::to_string(v);
        write(dir, name, wyjit::fuzz::check_input(check, 0, spec, args.data(), args.size()));
        if (v != 0) continue;
        // The refusals before the arguments are read.
        const Bytes odd = [&] {
          Bytes b = args;
          b[0] ^= 8;  // struct_size of another version
          return b;
        }();
        write(dir, name + "-struct-size",
              wyjit::fuzz::check_input(check, wyjit::fuzz::kFlagStructSize, spec, odd.data(),
                                       odd.size()));
        write(dir, name + "-other-family",
              wyjit::fuzz::check_input(
                  check, wyjit::fuzz::kFlagOtherFamily,
                  wyjit::fuzz::next_family(*wyjit::detail::find_family(family)).make(), args.data(),
                  args.size()));
      }
    }
  }
}

void entry_seeds(const fs::path& dir, const fs::path& root) {
  for (const fs::directory_entry& file : fs::recursive_directory_iterator(root)) {
    const std::string ext = file.path().extension().string();
    if (!file.is_regular_file() || (ext != ".cubin" && ext != ".ptx")) continue;
    std::ifstream in(file.path(), std::ios::binary);
    Bytes bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const std::string name =
        file.path().parent_path().filename().string() + "-" + file.path().stem().stem().string();
    if (bytes.size() <= kMaxSeedBytes) {
      write(dir, name + ".entry", bytes);
      continue;
    }
    wyjit::detail::EntryRead read = wyjit::detail::decode_entry(bytes, std::nullopt);
    if (read.status != wyjit::detail::EntryRead::Status::ok) {
      throw std::runtime_error(file.path().string() + ": " + read.reason);
    }
    const std::size_t cut = kMaxSeedBytes - (bytes.size() - read.entry.payload.size());
    read.entry.payload.resize(cut);
    write(dir, name + ".payload-cut.entry", wyjit::detail::encode_entry(read.entry));
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2 && argc != 3) {
    std::fprintf(stderr, "usage: %s CORPUS_DIR [ENTRY_ROOT]\n", argv[0]);
    return 2;
  }
  try {
    const fs::path corpus = argv[1];
    spec_name_seeds(corpus / "spec_names");
    cli_seeds(corpus / "cli_args");
    capi_seeds(corpus / "capi_check");
    if (argc == 3) entry_seeds(corpus / "entry_decode", argv[2]);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "wyjit_fuzz_seeds: %s\n", e.what());
    return 1;
  }
  return 0;
}
