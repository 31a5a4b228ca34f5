// SPDX-License-Identifier: Apache-2.0
// bench_cache: cold NVRTC compiles per family and K, and interleaved A/B runs of NVRTC option
// lists, on variants drawn from the standard matrix.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <utility>

#include "bench/bench_cache.hpp"
#include "compile/nvrtc_compiler.hpp"
#include "stamp/stamp.hpp"

namespace wyjit::cache_bench {

namespace {

using Group = std::pair<std::string, int>;  // (family, K)

// The standard matrix's variants with K in `ks`, by (family, K).
std::map<Group, std::vector<KernelSpec>> matrix_groups(const std::vector<int>& ks) {
  std::map<Group, std::vector<KernelSpec>> groups;
  for (const KernelSpec& s : standard_matrix()) {
    const int k = std::stoi(field_value(s, "k"));
    if (std::find(ks.begin(), ks.end(), k) != ks.end()) {
      groups[{std::string(family_name(s)), k}].push_back(s);
    }
  }
  return groups;
}

// For each round, one variant of the standard matrix per (family, K in `ks`); the others of
// that (family, K) (io, addressing, rollback) take turns from round to round.
std::vector<std::pair<Group, KernelSpec>> sample(const std::vector<int>& ks, int round) {
  const std::map<Group, std::vector<KernelSpec>> groups = matrix_groups(ks);
  std::vector<std::pair<Group, KernelSpec>> out;
  for (const auto& [group, specs] : groups) {
    const std::size_t at = static_cast<std::size_t>(7 * round + group.second) % specs.size();
    out.emplace_back(group, specs[at]);
  }
  return out;
}

struct Sample {
  double wall_ms = 0.0;
  double cpu_ms = 0.0;
};

void print_row(const std::string& label, const std::vector<Sample>& samples) {
  std::vector<double> wall;
  std::vector<double> cpu;
  for (const Sample& s : samples) {
    wall.push_back(s.wall_ms);
    cpu.push_back(s.cpu_ms);
  }
  const Stats w = stats(wall);
  const Stats c = stats(cpu);
  fmt::print("  {:<20} {:>4} {:>10.1f} {:>10.1f} {:>10.1f} {:>10.1f}\n", label, samples.size(),
             w.median, w.p90, c.median, c.p90);
}

// The median over the standard matrix (restricted to `ks`): each (family, K)'s samples stand
// for that group's variants, so a sample weighs (variants in its group) / (samples of it).
double matrix_median(const std::map<Group, std::vector<double>>& per_group,
                     const std::vector<int>& ks) {
  const std::map<Group, std::vector<KernelSpec>> groups = matrix_groups(ks);
  std::vector<std::pair<double, double>> weighted;  // (value, weight)
  double total = 0.0;
  for (const auto& [group, values] : per_group) {
    const auto found = groups.find(group);
    if (found == groups.end() || values.empty()) continue;
    const double w = static_cast<double>(found->second.size()) / static_cast<double>(values.size());
    for (const double v : values) weighted.emplace_back(v, w);
    total += static_cast<double>(found->second.size());
  }
  std::sort(weighted.begin(), weighted.end());
  double seen = 0.0;
  for (const auto& [value, w] : weighted) {
    seen += w;
    if (seen >= total / 2) return value;
  }
  return 0.0;
}

std::string group_label(const Group& g) { return fmt::format("{} K={}", g.first, g.second); }

}  // namespace

void bench_cold_compiles(const std::vector<int>& ks, int rounds) {
  fmt::print(
      "cold compile, sm_90: one variant per (family, K) of the standard matrix per round, each in "
      "a fresh memory-only Jit; {} rounds, load average {:.1f}\n",
      rounds, load_average());
  std::map<Group, std::vector<Sample>> per_group;
  std::map<std::string, std::vector<Sample>> per_family;
  std::vector<Sample> all;
  double first_wall = -1.0;
  double first_cpu = -1.0;
  for (int round = 0; round < rounds; ++round) {
    for (const auto& [group, spec] : sample(ks, round)) {
      Jit jit(JitOptions{.cache_dir = "", .disk_cache = false});
      const double cpu0 = process_cpu_ms();
      const Clock::time_point t0 = Clock::now();
      jit.compile(spec, kSm90);
      const Sample s{.wall_ms = ns_between(t0, Clock::now()) / 1e6,
                     .cpu_ms = process_cpu_ms() - cpu0};
      if (first_wall < 0) {  // NVRTC's own start-up and the identity probe
        first_wall = s.wall_ms;
        first_cpu = s.cpu_ms;
        continue;
      }
      per_group[group].push_back(s);
      per_family[group.first].push_back(s);
      all.push_back(s);
    }
  }
  fmt::print("  {:<20} {:>4} {:>10} {:>10} {:>10} {:>10}   (ms; CPU: all threads)\n", "variant",
             "n", "wall med", "wall p90", "CPU med", "CPU p90");
  for (const auto& [group, samples] : per_group) print_row(group_label(group), samples);
  for (const auto& [family, samples] : per_family) {
    print_row(fmt::format("{}, all K", family), samples);
  }
  print_row("all", all);
  std::map<Group, std::vector<double>> wall, cpu;
  for (const auto& [group, samples] : per_group) {
    for (const Sample& x : samples) {
      wall[group].push_back(x.wall_ms);
      cpu[group].push_back(x.cpu_ms);
    }
  }
  std::size_t variants = 0;
  for (const auto& [group, specs] : matrix_groups(ks)) variants += specs.size();
  fmt::print(
      "  standard matrix ({} variants with these K), each (family, K) weighted by its "
      "variants: median {:.1f} ms wall, {:.1f} ms CPU\n",
      variants, matrix_median(wall, ks), matrix_median(cpu, ks));
  fmt::print("  first compile in the process (not counted above): {:.1f} ms wall, {:.1f} ms CPU\n",
             first_wall, first_cpu);
}

void bench_nvrtc_ab(const std::vector<int>& ks, int rounds, const std::vector<std::string>& extra,
                    const std::vector<std::string>& drop) {
  const std::vector<std::string> a = detail::nvrtc_options(kSm90);
  std::vector<std::string> b;
  for (const std::string& o : a) {
    if (std::find(drop.begin(), drop.end(), o) == drop.end()) b.push_back(o);
  }
  b.insert(b.end(), extra.begin(), extra.end());
  fmt::print("NVRTC option A/B, sm_90, ABBA per variant, {} rounds, load average {:.1f}\n", rounds,
             load_average());
  fmt::print("  A: {}\n  B: {}\n", fmt::join(a, " "), fmt::join(b, " "));
  detail::nvrtc_identity();  // NVRTC's start-up, so that it lands in neither column
  struct PerGroup {
    std::vector<double> a_ms, b_ms;
    int identical = 0;   // A's binary == B's
    int repeatable = 0;  // A == A and B == B when compiled again
    int compared = 0;
  };
  std::map<Group, PerGroup> per_group;
  std::vector<double> all_a, all_b;
  for (int round = 0; round < rounds; ++round) {
    for (const auto& [group, spec] : sample(ks, round)) {
      const detail::StampedSource source = detail::stamp(spec);
      const auto compile = [&](const std::vector<std::string>& options, double& ms) {
        const double cpu0 = process_cpu_ms();
        detail::NvrtcResult r = detail::nvrtc_compile_with(
            source.text, source.program_name, source.name_expressions, kSm90, "ab", options);
        ms = process_cpu_ms() - cpu0;
        return r.binary;
      };
      double a1 = 0, b1 = 0, b2 = 0, a2 = 0;
      const std::vector<std::uint8_t> bin_a = compile(a, a1);
      const std::vector<std::uint8_t> bin_b = compile(b, b1);
      const std::vector<std::uint8_t> bin_b2 = compile(b, b2);
      const std::vector<std::uint8_t> bin_a2 = compile(a, a2);
      PerGroup& p = per_group[group];
      for (const double x : {a1, a2}) {
        p.a_ms.push_back(x);
        all_a.push_back(x);
      }
      for (const double x : {b1, b2}) {
        p.b_ms.push_back(x);
        all_b.push_back(x);
      }
      p.identical += bin_a == bin_b ? 1 : 0;
      p.repeatable += bin_a == bin_a2 && bin_b == bin_b2 ? 1 : 0;
      p.compared += 1;
    }
  }
  fmt::print("  {:<20} {:>10} {:>10} {:>10} {:>8}  {}\n", "variant", "A CPU med", "B CPU med",
             "B - A", "B/A", "binaries: A == B, each repeatable");
  for (const auto& [group, p] : per_group) {
    const double ma = stats(p.a_ms).median;
    const double mb = stats(p.b_ms).median;
    fmt::print("  {:<20} {:>10.1f} {:>10.1f} {:>+10.1f} {:>8.3f}  {} of {}, {} of {}\n",
               group_label(group), ma, mb, mb - ma, mb / ma, p.identical, p.compared, p.repeatable,
               p.compared);
  }
  const double ma = stats(all_a).median;
  const double mb = stats(all_b).median;
  fmt::print("  {:<20} {:>10.1f} {:>10.1f} {:>+10.1f} {:>8.3f}  (p90 A {:.1f}, B {:.1f})\n", "all",
             ma, mb, mb - ma, mb / ma, stats(all_a).p90, stats(all_b).p90);
}

}  // namespace wyjit::cache_bench
