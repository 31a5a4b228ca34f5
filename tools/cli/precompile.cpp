// SPDX-License-Identifier: Apache-2.0
// `wyjit precompile`: compile a matrix of variants for one or more targets into the disk
// cache, in parallel, through one Jit.
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

constexpr const char* kPrecompileHelp = R"(Usage: wyjit precompile --arch A [--arch B ...] [options]

Compiles every variant of a matrix for every target into the disk cache, so an
engine finds its cubins without NVRTC. Needs no GPU. Variants already in the
cache are reported as cached and not rebuilt.

Options:
  --arch A[,B...]     target(s): sm_XX (cubin), sm_XXa (arch-specific cubin) or
                      compute_XX (PTX); required, repeatable
  --cache-dir DIR     cache root (default: $WYJIT_CACHE_DIR, else the library default)
  --k LIST            tokens per sequence, e.g. 1-17,32 (default 1-17)
  --io LIST           io dtypes: f32,f16,bf16 (default all three)
  --layout LIST       state layouts: vk,kv (default vk)
  --all               the standard matrix, explicitly: K 1-17, io f32,f16,bf16,
                      state f32, strided addressing, layout vk, d128
  -j, --jobs N        worker threads (default: hardware threads)
  --json              print one JSON document instead of one line per variant
  -h, --help          this text

Every variant uses state f32, strided addressing and dk = dv = 128.

Exit status: 0 all ok, 1 a variant failed (each failure's message is printed),
2 usage error (nothing compiled or written).
)";

struct Job {
  Target target;
  KernelSpec spec;
};

struct Outcome {
  enum class Status { compiled, cached, failed } status = Status::failed;
  double ms = 0.0;
  std::string path;
  std::string key_hash;
  std::string error;
};

const char* status_name(Outcome::Status s) {
  switch (s) {
    case Outcome::Status::compiled:
      return "compiled";
    case Outcome::Status::cached:
      return "cached";
    case Outcome::Status::failed:
      return "failed";
  }
  return "?";
}

struct Options {
  std::vector<Target> targets;
  std::string cache_dir;
  std::vector<int> ks;
  std::vector<DType> ios;
  std::vector<Layout> layouts;
  int jobs = 0;
  bool json = false;
};

Options parse_options(std::span<const std::string> args) {
  const std::string cmd = "precompile";
  ArgReader reader(cmd, args);
  Options opt;
  bool all = false;
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
    } else if (reader.option("--cache-dir", value)) {
      if (value.empty()) throw UsageError(cmd, "bad value '' for --cache-dir: empty path");
      opt.cache_dir = value;
    } else if (reader.option("--k", value)) {
      opt.ks = parse_k_list(cmd, value);
      custom = true;
    } else if (reader.option("--io", value)) {
      opt.ios = parse_dtype_list(cmd, "--io", value);
      custom = true;
    } else if (reader.option("--layout", value)) {
      opt.layouts = parse_layout_list(cmd, value);
      custom = true;
    } else if (reader.option("--jobs", value, "-j")) {
      opt.jobs = parse_int(cmd, "--jobs", value, 1, 1024);
    } else if (reader.flag("--all")) {
      all = true;
    } else if (reader.flag("--json")) {
      opt.json = true;
    } else {
      reader.reject();
    }
  }
  if (all && custom) {
    throw UsageError(cmd, "--all selects the standard matrix; drop it or --k/--io/--layout");
  }
  if (opt.targets.empty()) throw UsageError(cmd, "missing --arch (e.g. --arch sm_90)");
  // The standard matrix fills whatever was not given.
  if (opt.ks.empty()) {
    for (int k = 1; k <= 17; ++k) opt.ks.push_back(k);
  }
  if (opt.ios.empty()) opt.ios = {DType::f32, DType::f16, DType::bf16};
  if (opt.layouts.empty()) opt.layouts = {Layout::vk};
  if (opt.jobs == 0) opt.jobs = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  return opt;
}

// Every (target, variant) pair, validated before anything is compiled or written.
std::vector<Job> make_jobs(const Options& opt) {
  std::vector<KernelSpec> specs;
  for (DType io : opt.ios) {
    for (Layout layout : opt.layouts) {
      for (int k : opt.ks) {
        KernelSpec spec;
        spec.family = Family::gdn_verify;
        spec.k = k;
        spec.io = io;
        spec.state = DType::f32;
        spec.addressing = Addressing::strided;
        spec.layout = layout;
        spec.dk = 128;
        spec.dv = 128;
        try {
          validate_spec(spec);
        } catch (const std::exception& e) {
          throw UsageError("precompile",
                           fmt::format("variant {} is not supported by this build: {}",
                                       format_spec(spec), e.what()));
        }
        specs.push_back(spec);
      }
    }
  }
  std::vector<Job> jobs;
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

  JitOptions jit_options = JitOptions::from_env();
  if (!opt.cache_dir.empty()) jit_options.cache_dir = opt.cache_dir;
  std::optional<Jit> jit;
  try {
    jit.emplace(jit_options);
  } catch (const std::exception& e) {
    fmt::print(stderr, "wyjit precompile: cannot open the cache: {}\n", e.what());
    return kExitFailure;
  }

  std::size_t target_width = 0;
  for (const Target& t : opt.targets) target_width = std::max(target_width, t.name().size());

  // Step: compile in parallel; each worker takes the next job index.
  const auto start = std::chrono::steady_clock::now();
  std::vector<Outcome> outcomes(jobs.size());
  std::atomic<std::size_t> next{0};
  std::mutex print_mutex;
  auto worker = [&] {
    for (std::size_t i = next++; i < jobs.size(); i = next++) {
      const Job& job = jobs[i];
      Outcome& out = outcomes[i];
      const auto t0 = std::chrono::steady_clock::now();
      try {
        const auto compiled = jit->compile(job.spec, job.target);
        out.status = compiled->from_disk ? Outcome::Status::cached : Outcome::Status::compiled;
        out.path = compiled->path;
        out.key_hash = compiled->key_hash;
      } catch (const std::exception& e) {
        out.status = Outcome::Status::failed;
        out.error = e.what();
      }
      out.ms =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      if (opt.json) continue;
      const std::lock_guard lock(print_mutex);
      fmt::print("{:<8}  {:<{}}  {}  ({:.0f} ms)\n", status_name(out.status), job.target.name(),
                 target_width, format_spec(job.spec), out.ms);
      std::fflush(stdout);
    }
  };
  {
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
      case Outcome::Status::compiled:
        ++compiled;
        break;
      case Outcome::Status::cached:
        ++cached;
        break;
      case Outcome::Status::failed:
        ++failed;
        break;
    }
  }

  if (opt.json) {
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
      if (o.status == Outcome::Status::failed) {
        r["error"] = o.error;
      } else {
        r["path"] = o.path;
        r["key_hash"] = o.key_hash;
      }
      doc["results"].push_back(std::move(r));
    }
    doc["summary"] = {
        {"compiled", compiled}, {"cached", cached}, {"failed", failed}, {"seconds", seconds}};
    // NOTE: compiler logs may hold bytes that are not UTF-8; replace them, never throw.
    fmt::print("{}\n", doc.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace));
    return failed == 0 ? kExitOk : kExitFailure;
  }

  if (failed > 0) {
    std::fflush(stdout);
    for (std::size_t i = 0; i < jobs.size(); ++i) {
      if (outcomes[i].status != Outcome::Status::failed) continue;
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
