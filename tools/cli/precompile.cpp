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
#include "cli/precompile_matrix.hpp"
#include "cli/precompile_model.hpp"
#include "compile/nvrtc_library.hpp"
#include "wyjit/jit.hpp"

namespace wyjit::cli {

namespace {

constexpr const char* kPrecompileHelp =
    R"(Usage: wyjit precompile --arch A [--arch B ...] [--all | --model FILE | selectors] [options]

Compiles every variant of a matrix for every target into the writable cache root,
so that an engine finds its binaries without NVRTC. Needs no GPU. Variants already
in that root are reported as cached and not rebuilt. Read-only roots
(WYJIT_CACHE_RO_DIRS) and WYJIT_NO_JIT are ignored: the root is filled.

Targets:
  --arch A[,B...]     sm_XX (cubin), sm_XXa (arch-specific cubin) or compute_XX
                      (PTX); required, repeatable

Variants: --all, --model, or selectors. A selector not given takes the standard
matrix's values for each family.
  --all               the standard matrix (the "standard" values below)
  --model FILE        what the GDN layers of the model of a Hugging Face
                      config.json run (Qwen3-Next, Qwen3.5): its dtype, head dims
                      and conv width, q/k normalised and gates fused; selectors
                      change the rest (--k 2-4, --gating off,on, --state bf16)
  --tp LIST           with --model: tensor-parallel degrees that must split its
                      heads evenly (default: 1); prints each rank's shapes
  --family LIST       the families to build (default: the families that have the
                      fields the selectors name, when not every family has them;
                      else every family)
  --set FIELD=LIST    the values of a field, for every family that has it; also
                      spelled --FIELD LIST (a flag alone, e.g. --l2norm, is on).
                      LIST: comma-separated values, numbers also as ranges (1-17)
A selector for a field no family of --family has is a usage error. The fields:
Options:
  --cache-dir DIR     writable root (default: $WYJIT_CACHE_DIR, else
                      $XDG_CACHE_HOME/wyjit, else ~/.cache/wyjit)
  -j, --jobs N        worker threads (default: hardware threads)
  --json              print one JSON document instead of progress
  --dry-run           print the variants (and the model's shapes); compile nothing
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

// Every (target, variant) pair, validated before anything is compiled or written.
std::vector<Job> make_jobs(const PrecompileOptions& opt, const std::vector<KernelSpec>& specs) {
  std::vector<Job> jobs;
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

// --dry-run: what would be compiled, for people or (--json) for programs.
int print_dry_run(const PrecompileOptions& opt, const std::optional<ModelPlan>& plan,
                  const std::vector<KernelSpec>& specs) {
  if (opt.json) {
    nlohmann::ordered_json doc;
    doc["targets"] = nlohmann::ordered_json::array();
    for (const Target& t : opt.targets) doc["targets"].push_back(t.name());
    if (plan) doc["model"] = model_plan_json(*plan);
    doc["variants"] = nlohmann::ordered_json::array();
    for (const KernelSpec& spec : specs) doc["variants"].push_back(format_spec(spec));
    fmt::print("{}\n", doc.dump(2));
    return kExitOk;
  }
  if (plan) {
    print_model_plan(*plan);
  } else {
    fmt::print("{} variants\n", specs.size());
  }
  for (const KernelSpec& spec : specs) fmt::print("  {}\n", format_spec(spec));
  return kExitOk;
}

}  // namespace

int run_precompile(std::span<const std::string> args) {
  if (wants_help(args)) {
    const std::string help = kPrecompileHelp;
    const std::size_t at = help.find("Options:\n  --cache-dir");
    fmt::print("{}{}\n{}", help.substr(0, at), selector_help(), help.substr(at));
    return kExitOk;
  }
  const PrecompileOptions opt = parse_precompile_options(args);
  check_model_options(opt);
  std::optional<ModelPlan> plan;
  if (!opt.model.empty()) plan = plan_model(opt);
  const std::vector<KernelSpec> specs = plan ? plan->specs : selected_specs(opt);
  const std::vector<Job> jobs = make_jobs(opt, specs);
  if (opt.dry_run) return print_dry_run(opt, plan, specs);
  // NOTE: every variant's cache key names the NVRTC build, so even a fully cached matrix needs it.
  if (const std::string& why = detail::nvrtc_library().error; !why.empty()) {
    fmt::print(stderr, "wyjit precompile: {}", why);
    return kExitFailure;
  }

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

  if (plan && !opt.json) print_model_plan(*plan);

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
    if (plan) doc["model"] = model_plan_json(*plan);
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
