// SPDX-License-Identifier: Apache-2.0
// `wyjit precompile`: compile a matrix of variants for one or more targets into the writable
// cache root, in parallel, through one Jit.
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdio>
#include <exception>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "cli/cli.hpp"
#include "wyjit/jit.hpp"

namespace wyjit::cli {

namespace {

constexpr const char* kPrecompileHelp =
    R"(Usage: wyjit precompile --arch A [--arch B ...] [--all | selectors] [options]

Compiles every variant of a matrix for every target into the writable cache root,
so that an engine finds its binaries without NVRTC. Needs no GPU. Variants already
in that root are reported as cached and not rebuilt. Read-only roots
(WYJIT_CACHE_RO_DIRS) and WYJIT_NO_JIT are ignored: the root is filled.

Targets:
  --arch A[,B...]     sm_XX (cubin), sm_XXa (arch-specific cubin) or compute_XX
                      (PTX); required, repeatable

Variants: --all, or any of these selectors (each defaults to the standard matrix):
  --all               the standard matrix: K 1-17, io f32,f16,bf16, state f32,
                      every addressing mode this build supports, layout vk, d128
  --k LIST            tokens per sequence, e.g. 1-17,32 (default 1-17)
  --io LIST           io dtypes: f32,f16,bf16 (default all three)
  --state LIST        state dtypes: f32,f16,bf16 (default f32)
  --addressing LIST   strided,table,slot (default every supported mode)
  --layout LIST       state layouts: vk,kv (default vk)
  --dk LIST           key head dims: 64,128,256 (default 128)
  --dv LIST           value head dims: 64,128,256 (default 128)
  --l2norm            variants that L2-normalise q and k in the kernel
  --gating            variants with fused gating

Options:
  --cache-dir DIR     writable root (default: $WYJIT_CACHE_DIR, else
                      $XDG_CACHE_HOME/wyjit, else ~/.cache/wyjit)
  -j, --jobs N        worker threads (default: hardware threads)
  --json              print one JSON document instead of progress
  -h, --help          this text

On a terminal a progress bar is drawn; otherwise one line per variant. The last
line counts compiled, already cached and failed variants, and the time.

Exit status: 0 all ok, 1 a variant failed or the root cannot be written (each
failure's message is printed), 2 usage error (nothing compiled or written).
)";

struct Job {
  Target target;
  KernelSpec spec;
};

struct Outcome {
  Progress::Status status = Progress::Status::failed;
  double ms = 0.0;
  std::string path;
  std::string key_hash;
  std::string error;
};

const char* status_name(Progress::Status s) {
  switch (s) {
    case Progress::Status::compiled:
      return "compiled";
    case Progress::Status::cached:
      return "cached";
    case Progress::Status::failed:
      return "failed";
  }
  return "?";
}

struct Options {
  std::vector<Target> targets;
  std::string cache_dir;
  bool all = false;
  std::vector<int> ks;
  std::vector<DType> ios;
  std::vector<DType> states;
  std::vector<Addressing> addressings;
  std::vector<Layout> layouts;
  std::vector<int> dks;
  std::vector<int> dvs;
  bool l2norm = false;
  bool gating = false;
  int jobs = 0;
  bool json = false;
};

Options parse_options(std::span<const std::string> args) {
  const std::string cmd = "precompile";
  ArgReader reader(cmd, args);
  Options opt;
  bool custom = false;
  std::string value;
  while (!reader.done()) {
    if (reader.option("--arch", value)) {
      for (const std::string& item : split_list(cmd, "--arch", value)) {
        const Target t = parse_target(cmd, item);
        if (std::find(opt.targets.begin(), opt.targets.end(), t) == opt.targets.end()) {
          opt.targets.push_back(t);
        }
      }
      continue;
    }
    if (reader.option("--cache-dir", value)) {
      if (value.empty()) throw UsageError(cmd, "bad value '' for --cache-dir: empty path");
      opt.cache_dir = value;
      continue;
    }
    if (reader.option("--jobs", value, "-j")) {
      opt.jobs = parse_int(cmd, "--jobs", value, 1, 1024);
      continue;
    }
    if (reader.flag("--all")) {
      opt.all = true;
      continue;
    }
    if (reader.flag("--json")) {
      opt.json = true;
      continue;
    }
    custom = true;
    if (reader.option("--k", value)) {
      opt.ks = parse_k_list(cmd, value);
    } else if (reader.option("--io", value)) {
      opt.ios = parse_dtype_list(cmd, "--io", value);
    } else if (reader.option("--state", value)) {
      opt.states = parse_dtype_list(cmd, "--state", value);
    } else if (reader.option("--addressing", value)) {
      opt.addressings = parse_addressing_list(cmd, value);
    } else if (reader.option("--layout", value)) {
      opt.layouts = parse_layout_list(cmd, value);
    } else if (reader.option("--dk", value)) {
      opt.dks = parse_dim_list(cmd, "--dk", value);
    } else if (reader.option("--dv", value)) {
      opt.dvs = parse_dim_list(cmd, "--dv", value);
    } else if (reader.flag("--l2norm")) {
      opt.l2norm = true;
    } else if (reader.flag("--gating")) {
      opt.gating = true;
    } else {
      reader.reject();
    }
  }
  if (opt.all && custom) {
    throw UsageError(cmd, "--all is the standard matrix: drop it, or drop the selectors");
  }
  if (opt.targets.empty()) throw UsageError(cmd, "missing --arch (e.g. --arch sm_90)");
  if (opt.jobs == 0) opt.jobs = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  return opt;
}

/// The selectors' matrix; a selector not given takes the standard matrix's values.
std::vector<KernelSpec> selected_specs(const Options& opt) {
  const std::vector<KernelSpec> standard = standard_matrix();
  if (opt.all) return standard;
  const auto standard_values = [&](auto field) {
    std::vector<std::decay_t<decltype(field(standard.front()))>> values;
    for (const KernelSpec& s : standard) {
      if (std::find(values.begin(), values.end(), field(s)) == values.end()) {
        values.push_back(field(s));
      }
    }
    return values;
  };
  const auto ks =
      opt.ks.empty() ? standard_values([](const KernelSpec& s) { return s.k; }) : opt.ks;
  const auto ios =
      opt.ios.empty() ? standard_values([](const KernelSpec& s) { return s.io; }) : opt.ios;
  const auto states = opt.states.empty()
                          ? standard_values([](const KernelSpec& s) { return s.state; })
                          : opt.states;
  const auto addressings = opt.addressings.empty()
                               ? standard_values([](const KernelSpec& s) { return s.addressing; })
                               : opt.addressings;
  const auto layouts = opt.layouts.empty()
                           ? standard_values([](const KernelSpec& s) { return s.layout; })
                           : opt.layouts;
  const auto dks =
      opt.dks.empty() ? standard_values([](const KernelSpec& s) { return s.dk; }) : opt.dks;
  const auto dvs =
      opt.dvs.empty() ? standard_values([](const KernelSpec& s) { return s.dv; }) : opt.dvs;
  std::vector<KernelSpec> specs;
  for (DType io : ios) {
    for (DType state : states) {
      for (Addressing addressing : addressings) {
        for (Layout layout : layouts) {
          for (int dk : dks) {
            for (int dv : dvs) {
              for (int k : ks) {
                specs.push_back({.family = Family::gdn_verify,
                                 .k = k,
                                 .io = io,
                                 .state = state,
                                 .addressing = addressing,
                                 .layout = layout,
                                 .dk = dk,
                                 .dv = dv,
                                 .l2norm_qk = opt.l2norm,
                                 .fused_gating = opt.gating});
              }
            }
          }
        }
      }
    }
  }
  return specs;
}

// Every (target, variant) pair, validated before anything is compiled or written.
std::vector<Job> make_jobs(const Options& opt) {
  std::vector<Job> jobs;
  const std::vector<KernelSpec> specs = selected_specs(opt);
  for (const KernelSpec& spec : specs) {
    try {
      validate_spec(spec);
    } catch (const std::exception& e) {
      throw UsageError("precompile", fmt::format("variant {} is not supported by this build: {}",
                                                 format_spec(spec), e.what()));
    }
  }
  for (const Target& target : opt.targets) {
    for (const KernelSpec& spec : specs) jobs.push_back({target, spec});
  }
  return jobs;
}

}  // namespace

int run_precompile(std::span<const std::string> args) {
  if (wants_help(args)) {
    fmt::print("{}", kPrecompileHelp);
    return kExitOk;
  }
  const Options opt = parse_options(args);
  const std::vector<Job> jobs = make_jobs(opt);

  std::optional<Jit> jit;
  try {
    JitOptions options = writer_options(opt.cache_dir);
    options.max_bytes = 0;  // NOTE: a precompile keeps everything it builds; see docs/cache.md
    jit.emplace(options);
  } catch (const std::exception& e) {
    fmt::print(stderr, "wyjit precompile: cannot open the cache: {}\n", e.what());
    return kExitFailure;
  }
  if (const CacheRootInfo root = jit->cache_roots().back(); root.read_only) {
    fmt::print(stderr, "wyjit precompile: cannot write the cache root '{}': {}\n", root.path,
               root.reason);
    return kExitFailure;
  }

  std::size_t target_width = 0;
  for (const Target& t : opt.targets) target_width = std::max(target_width, t.name().size());

  // Step: compile in parallel; each worker takes the next job index.
  const auto start = std::chrono::steady_clock::now();
  std::vector<Outcome> outcomes(jobs.size());
  std::atomic<std::size_t> next{0};
  {
    Progress progress(jobs.size(), opt.json);
    auto worker = [&] {
      for (std::size_t i = next++; i < jobs.size(); i = next++) {
        const Job& job = jobs[i];
        Outcome& out = outcomes[i];
        const auto t0 = std::chrono::steady_clock::now();
        try {
          const auto compiled = jit->compile(job.spec, job.target);
          out.path = compiled->path;
          out.key_hash = compiled->key_hash;
          if (out.path.empty()) {
            out.error = "compiled, but the cache entry could not be written (see the log above)";
          } else {
            out.status =
                compiled->from_disk ? Progress::Status::cached : Progress::Status::compiled;
          }
        } catch (const std::exception& e) {
          out.error = e.what();
        }
        out.ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                     .count();
        progress.done(out.status, job.target.name(), target_width, format_spec(job.spec), out.ms);
      }
    };
    const std::size_t n = std::min(jobs.size(), static_cast<std::size_t>(opt.jobs));
    std::vector<std::jthread> threads;
    threads.reserve(n);
    for (std::size_t t = 0; t < n; ++t) threads.emplace_back(worker);
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();

  // Step: report.
  std::size_t compiled = 0;
  std::size_t cached = 0;
  std::size_t failed = 0;
  for (const Outcome& o : outcomes) {
    switch (o.status) {
      case Progress::Status::compiled:
        ++compiled;
        break;
      case Progress::Status::cached:
        ++cached;
        break;
      case Progress::Status::failed:
        ++failed;
        break;
    }
  }

  if (opt.json) {
    const JitCounters counters = jit->counters();
    nlohmann::ordered_json doc;
    doc["wyjit_version"] = kVersion;
    doc["nvrtc_version"] = nvrtc_version_text();
    doc["cache_dir"] = jit->cache_dir();
    doc["jobs"] = opt.jobs;
    doc["results"] = nlohmann::ordered_json::array();
    for (std::size_t i = 0; i < jobs.size(); ++i) {
      const Outcome& o = outcomes[i];
      nlohmann::ordered_json r;
      r["target"] = jobs[i].target.name();
      r["variant"] = format_spec(jobs[i].spec);
      r["status"] = status_name(o.status);
      r["ms"] = o.ms;
      if (o.status == Progress::Status::failed) {
        r["error"] = o.error;
      } else {
        r["path"] = o.path;
        r["key_hash"] = o.key_hash;
      }
      doc["results"].push_back(std::move(r));
    }
    doc["summary"] = {{"compiled", compiled},
                      {"cached", cached},
                      {"failed", failed},
                      {"seconds", seconds},
                      {"lock_waits", counters.lock_waits},
                      {"lock_timeouts", counters.lock_timeouts},
                      {"compile_ms_total", counters.compile_ms_total}};
    // NOTE: compiler logs may hold bytes that are not UTF-8; replace them, never throw.
    fmt::print("{}\n", doc.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace));
    return failed == 0 ? kExitOk : kExitFailure;
  }

  if (failed > 0) {
    std::fflush(stdout);
    for (std::size_t i = 0; i < jobs.size(); ++i) {
      if (outcomes[i].status != Progress::Status::failed) continue;
      fmt::print(stderr, "error: {} {}: {}\n", jobs[i].target.name(), format_spec(jobs[i].spec),
                 outcomes[i].error);
    }
    std::fflush(stderr);
  }
  fmt::print("{} compiled, {} already cached, {} failed in {:.1f} s\n", compiled, cached, failed,
             seconds);
  return failed == 0 ? kExitOk : kExitFailure;
}

}  // namespace wyjit::cli
