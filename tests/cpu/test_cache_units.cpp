// SPDX-License-Identifier: Apache-2.0
// The cache's small parts, without NVRTC: settings parsers, lock files, root scans, LRU
// pruning, the SHA-256 hardware path.
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <random>
#include <thread>

#include "cache/cache_env.hpp"
#include "cache/cache_lock.hpp"
#include "cache/cache_prune.hpp"
#include "cache/memory_table.hpp"
#include "cache/sha256.hpp"
#include "test_cache_support.hpp"
#include "wyjit/error.hpp"

using namespace wyjit;
using namespace wyjit::test;

namespace {

/// An environment variable set for the scope of one test, restored afterwards.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    if (value != nullptr) {
      ::setenv(name, value, 1);
    } else {
      ::unsetenv(name);
    }
  }
  ~ScopedEnv() {
    if (old_) {
      ::setenv(name_, old_->c_str(), 1);
    } else {
      ::unsetenv(name_);
    }
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  const char* name_;
  std::optional<std::string> old_;
};

/// A synthetic entry file (the scan and the prune look at names, sizes and times only).
fs::path fake_entry(const fs::path& root, const std::string& target, const std::string& variant,
                    std::size_t size, int age_seconds) {
  const fs::path path = root / target / (variant + ".0123456789abcdef.cubin");
  fs::create_directories(path.parent_path());
  write_bytes(path, Bytes(size, 1));
  make_old(path, age_seconds);
  return path;
}

}  // namespace

TEST_CASE("cache settings: byte sizes, flags, path lists", "[cache][units]") {
  using detail::parse_byte_size;
  CHECK(parse_byte_size("0") == 0u);
  CHECK(parse_byte_size("1073741824") == 1073741824u);
  CHECK(parse_byte_size("64K") == 65536u);
  CHECK(parse_byte_size("512M") == 512u << 20);
  CHECK(parse_byte_size("1G") == 1u << 30);
  CHECK(parse_byte_size("2gib") == std::uint64_t{2} << 30);
  CHECK(parse_byte_size("3T") == std::uint64_t{3} << 40);
  for (const char* bad :
       {"", "G", "-1", "1.5G", "12 M", "1Q", "99999999999999999999", "17179869184T"}) {
    INFO(bad);
    CHECK_FALSE(parse_byte_size(bad).has_value());
  }
  CHECK(detail::parse_flag("1") == true);
  CHECK(detail::parse_flag("YES") == true);
  CHECK(detail::parse_flag("off") == false);
  CHECK_FALSE(detail::parse_flag("2").has_value());
  CHECK(detail::split_path_list("/a:/b c::/ü/d:") ==
        std::vector<std::string>{"/a", "/b c", "/ü/d"});
  CHECK(detail::split_path_list("").empty());
  CHECK(detail::format_bytes(1536) == "1.5 KiB");
  CHECK(detail::format_bytes(12) == "12 B");
}

TEST_CASE("JitOptions::from_env reads every cache variable", "[cache][units]") {
  const ScopedEnv dir("WYJIT_CACHE_DIR", "/some/cache dir");
  const ScopedEnv ro("WYJIT_CACHE_RO_DIRS", "/ro/one:/ro/two");
  const ScopedEnv no_jit("WYJIT_NO_JIT", "1");
  const ScopedEnv save("WYJIT_SAVE_SOURCE", "true");
  const ScopedEnv max("WYJIT_CACHE_MAX_BYTES", "256M");
  const ScopedEnv locks("WYJIT_LOCK_DIR", "/run/locks");
  const JitOptions options = JitOptions::from_env();
  CHECK(options.cache_dir == "/some/cache dir");
  CHECK(options.read_only_dirs == std::vector<std::string>{"/ro/one", "/ro/two"});
  CHECK(options.no_jit);
  CHECK(options.save_source);
  CHECK(options.max_bytes == 256u << 20);
  CHECK(options.lock_dir == "/run/locks");
  CHECK(options.process_locks);

  const ScopedEnv bad_max("WYJIT_CACHE_MAX_BYTES", "lots");
  const ScopedEnv bad_flag("WYJIT_NO_JIT", "maybe");
  LogCapture log;
  const JitOptions fallback = JitOptions::from_env();
  CHECK(fallback.max_bytes == JitOptions{}.max_bytes);
  CHECK_FALSE(fallback.no_jit);
  CHECK(log.count(spdlog::level::warn, "WYJIT_CACHE_MAX_BYTES='lots'") == 1);
  CHECK(log.count(spdlog::level::warn, "WYJIT_NO_JIT='maybe'") == 1);
}

TEST_CASE("default cache root: WYJIT_CACHE_DIR, XDG_CACHE_HOME, HOME", "[cache][units]") {
  const ScopedEnv xdg("XDG_CACHE_HOME", "/xdg");
  const ScopedEnv home("HOME", "/home/me");
  {
    const ScopedEnv dir("WYJIT_CACHE_DIR", "/explicit");
    CHECK(detail::default_cache_root() == "/explicit");
  }
  const ScopedEnv dir("WYJIT_CACHE_DIR", nullptr);
  CHECK(detail::default_cache_root() == "/xdg/wyjit");
  const ScopedEnv no_xdg("XDG_CACHE_HOME", "");
  CHECK(detail::default_cache_root() == "/home/me/.cache/wyjit");
}

TEST_CASE("file locks: exclusive between descriptors, released on destruction", "[cache][units]") {
  ScratchDir scratch;
  using Outcome = detail::FileLock::Outcome;
  const fs::path path = scratch / "key.lock";
  Outcome outcome = Outcome::failed;
  std::string error;
  {
    const detail::FileLock first =
        detail::FileLock::acquire(path, std::chrono::milliseconds(0), outcome, error);
    CHECK(outcome == Outcome::acquired);
    CHECK(first.held());
    const detail::FileLock second =
        detail::FileLock::acquire(path, std::chrono::milliseconds(30), outcome, error);
    CHECK(outcome == Outcome::timed_out);
    CHECK_FALSE(second.held());
  }
  CHECK_FALSE(fs::exists(path));  // released locks leave no file behind
  {
    const detail::FileLock third =
        detail::FileLock::acquire(path, std::chrono::milliseconds(0), outcome, error);
    CHECK(outcome == Outcome::acquired);
    CHECK(fs::exists(path));
  }
  CHECK_FALSE(fs::exists(path));

  // Never through a symlink.
  fs::create_symlink(scratch / "elsewhere", scratch / "planted.lock");
  const detail::FileLock planted = detail::FileLock::acquire(
      scratch / "planted.lock", std::chrono::milliseconds(0), outcome, error);
  CHECK(outcome == Outcome::failed);
  CHECK_THAT(error, Catch::Contains("planted.lock"));
  CHECK_FALSE(fs::exists(scratch / "elsewhere"));
}

TEST_CASE("lock directories: one private directory per root", "[cache][units]") {
  ScratchDir scratch;
  const fs::path a = detail::prepare_lock_dir(scratch / "base", "/cache/one");
  const fs::path b = detail::prepare_lock_dir(scratch / "base", "/cache/two");
  CHECK(a != b);
  CHECK(a == detail::prepare_lock_dir(scratch / "base", "/cache/./one/"));
  CHECK(a.parent_path() == scratch / "base");
  CHECK((fs::status(a).permissions() & fs::perms::all) == fs::perms::owner_all);
  write_bytes(scratch / "file", {'x'});
  CHECK_THROWS_WITH(detail::prepare_lock_dir(scratch / "file", "/cache/one"),
                    Catch::Contains((scratch / "file").string()));
}

TEST_CASE("root scan: entries, saved sources, temp files, strangers", "[cache][units]") {
  ScratchDir scratch;
  const fs::path root = scratch.path();
  const fs::path e1 =
      fake_entry(root, "sm_90", "gdn_verify.k1.io_f32.st_f32.strided.vk.d128", 100, 10);
  fake_entry(root, "compute_80", "gdn_verify.k2.io_f32.st_f32.strided.vk.d128", 50, 20);
  write_bytes(fs::path(e1.string() + ".cu"), Bytes(7, 'c'));
  write_bytes(root / "sm_90" / "gone.0123456789abcdef.cubin.cu", Bytes(3, 'c'));
  write_bytes(root / "sm_90" / ".x.cubin.tmp.12.0123456789abcdef", Bytes(3, 't'));
  write_bytes(root / "sm_90" / "README", Bytes(3, 'r'));
  fs::create_directories(root / "not-a-target");
  write_bytes(root / "not-a-target" / "y.0123456789abcdef.cubin", Bytes(3, 'y'));

  const detail::RootScan scan = detail::scan_root(root);
  CHECK(scan.exists);
  REQUIRE(scan.entries.size() == 2);
  CHECK(scan.entries[1].path == e1);
  CHECK(scan.entries[1].bytes == 107);
  CHECK(scan.entries[1].has_saved_source);
  CHECK(scan.entries[1].target == "sm_90");
  CHECK(scan.entries[1].variant == "gdn_verify.k1.io_f32.st_f32.strided.vk.d128");
  CHECK(scan.entries[1].hash16 == "0123456789abcdef");
  CHECK(scan.entries[0].target == "compute_80");
  CHECK(scan.bytes == 157);
  CHECK(scan.temps.size() == 1);
  CHECK(scan.orphan_sources.size() == 1);
  CHECK(scan.others.size() == 1);
  CHECK_FALSE(detail::scan_root(root / "absent").exists);
}

TEST_CASE("prune: stale leftovers swept, least recently used evicted first", "[cache][units]") {
  ScratchDir scratch;
  const fs::path root = scratch.path();
  const fs::path oldest = fake_entry(root, "sm_90", "v.k1", 1000, 500);
  const fs::path middle = fake_entry(root, "sm_90", "v.k2", 1000, 400);
  const fs::path newest = fake_entry(root, "sm_80", "v.k3", 1000, 300);
  const fs::path kept = fake_entry(root, "sm_90", "v.k4", 1000, 600);  // the `keep` entry
  write_bytes(fs::path(middle.string() + ".cu"), Bytes(10, 'c'));
  const fs::path stale_temp = root / "sm_90" / ".v.cubin.tmp.1.0123456789abcdef";
  const fs::path fresh_temp = root / "sm_90" / ".w.cubin.tmp.1.0123456789abcdef";
  write_bytes(stale_temp, Bytes(5, 't'));
  make_old(stale_temp, 7200);
  write_bytes(fresh_temp, Bytes(5, 't'));
  const fs::path orphan = root / "sm_80" / "lost.0123456789abcdef.cubin.cu";
  write_bytes(orphan, Bytes(5, 'o'));
  make_old(orphan, 7200);

  // A use recorded on the oldest makes it the newest.
  detail::touch_entry(oldest);
  const detail::PruneResult result = detail::prune_root(root, 2100, kept);
  CHECK(result.bytes_before == 4010);
  CHECK(result.evicted == 2);
  CHECK(result.bytes_after == 2000);
  CHECK(result.swept == 2);
  CHECK(result.errors.empty());
  CHECK(fs::exists(oldest));
  CHECK(fs::exists(kept));
  CHECK_FALSE(fs::exists(middle));
  CHECK_FALSE(fs::exists(middle.string() + ".cu"));
  CHECK_FALSE(fs::exists(newest));
  CHECK_FALSE(fs::exists(stale_temp));
  CHECK(fs::exists(fresh_temp));
  CHECK_FALSE(fs::exists(orphan));

  const detail::PruneResult nothing = detail::prune_root(root, 1u << 30);
  CHECK(nothing.evicted == 0);
  CHECK(detail::prune_root(root / "absent", 0).evicted == 0);
}

TEST_CASE("entry file names: <variant>.<hash16>.cubin|ptx", "[cache][units]") {
  std::string variant;
  std::string hash;
  CHECK(detail::parse_entry_file_name("a.b.k4.0123456789abcdef.cubin", variant, hash));
  CHECK(variant == "a.b.k4");
  CHECK(hash == "0123456789abcdef");
  CHECK(detail::parse_entry_file_name("x.fedcba9876543210.ptx", variant, hash));
  CHECK(variant == "x");
  for (const char* bad : {"x.0123456789abcdef.cu", ".0123456789abcdef.cubin",
                          "x.0123456789ABCDEF.cubin", "x.0123456789abcde.cubin", "x.cubin"}) {
    INFO(bad);
    CHECK_FALSE(detail::parse_entry_file_name(bad, variant, hash));
  }
}

TEST_CASE("sha256: the hardware path matches the portable one", "[cache][units]") {
  std::mt19937 rng(4242);
  for (std::size_t size : {0, 1, 55, 56, 63, 64, 65, 127, 128, 1000, 4096, 65537}) {
    Bytes data(size);
    for (auto& b : data) b = static_cast<std::uint8_t>(rng());
    detail::Sha256 hardware(true);
    detail::Sha256 portable(false);
    const std::size_t cut = size == 0 ? 0 : rng() % size;
    hardware.update(data.data(), cut);
    hardware.update(data.data() + cut, size - cut);
    portable.update(data.data(), size);
    INFO("size " << size << ", hardware " << detail::sha256_hardware_available());
    CHECK(hardware.finish() == portable.finish());
  }
}

namespace {

struct IntNode {
  int key = 0;
  int value = 0;
};
struct IntHash {
  std::size_t operator()(int key) const noexcept {
    return static_cast<std::size_t>(key) * 0x9e3779b97f4a7c15ull;
  }
};

}  // namespace

TEST_CASE("memory table: lock-free finds while a writer grows the table", "[cache][units]") {
  detail::MemoryTable<IntNode, IntHash> table;
  constexpr int kKeys = 20000;
  std::atomic<int> published{0};  // keys 0 .. published-1 are in the table
  std::atomic<bool> done{false};
  std::atomic<long> wrong{0};
  std::atomic<long> finds{0};
  auto reader = [&](unsigned seed) {
    std::mt19937 rng(seed);
    while (!done.load()) {
      const int upto = published.load(std::memory_order_acquire);
      if (upto == 0) continue;
      const int key = static_cast<int>(rng() % static_cast<unsigned>(upto));
      const IntNode* node = table.find(key);
      if (node == nullptr || node->key != key || node->value != key * 3) ++wrong;
      if (table.find(kKeys + key) != nullptr) ++wrong;  // never published
      ++finds;
    }
  };
  std::vector<std::thread> readers;
  for (unsigned t = 0; t < 3; ++t) readers.emplace_back(reader, t + 1);
  for (int key = 0; key < kKeys; ++key) {
    table.publish(std::make_unique<IntNode>(IntNode{key, key * 3}));
    published.store(key + 1, std::memory_order_release);
  }
  // NOTE: on a loaded 2-core machine the writer can finish before any reader is scheduled;
  // keep the table alive until the readers have really looked.
  while (finds.load() < 3000) std::this_thread::yield();
  done = true;
  for (std::thread& t : readers) t.join();
  CHECK(wrong == 0);
  CHECK(finds > 0);
  CHECK(table.size() == static_cast<std::size_t>(kKeys));
  for (int key = 0; key < kKeys; ++key) {
    const IntNode* node = table.find(key);
    REQUIRE(node != nullptr);
    CHECK(node->value == key * 3);
  }
}

TEST_CASE("Jit memory tier: invalid specs are refused in every thread, never cached",
          "[cache][units]") {
  Jit jit(JitOptions{.cache_dir = "", .disk_cache = false});
  std::atomic<int> errors{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 200; ++i) {
        try {
          jit.compile(GdnVerifySpec{.k = 33 + i % 5}, Target{.arch = 90});
        } catch (const Error& e) {
          if (e.code() == ErrorCode::invalid_spec) ++errors;
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  CHECK(errors == 8 * 200);
  CHECK(jit.counters().compiles == 0);
  CHECK(jit.counters().memory_hits == 0);
}
