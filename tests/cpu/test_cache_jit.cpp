// SPDX-License-Identifier: Apache-2.0
// The Jit's tiers under normal use and under faults: every case must end with the right
// kernel (or a clear error) and a cache that is valid afterwards.
#include <fcntl.h>
#include <sched.h>
#include <sys/mount.h>
#include <sys/resource.h>

#include <csignal>
#include <thread>

#include "cache/cache_prune.hpp"
#include "test_cache_support.hpp"
#include "wyjit/error.hpp"

using namespace wyjit;
using namespace wyjit::test;

namespace {

const KernelSpec kSpec = GdnVerifySpec{.k = 1, .io = DType::f32};
const KernelSpec kOther = GdnVerifySpec{.k = 2, .io = DType::f32};
const Target kSm90{.arch = 90};

/// The genuine binary of kSpec for sm_90, compiled once per test run.
const CompiledKernel& reference() {
  static const std::shared_ptr<const CompiledKernel> compiled = [] {
    Jit jit(JitOptions{.cache_dir = "", .disk_cache = false});
    return jit.compile(kSpec, kSm90);
  }();
  return *compiled;
}

/// The entry file of kSpec, decoded with its real key; fails the test when it is not valid.
detail::CacheEntry valid_entry_at(const fs::path& path) {
  const detail::EntryRead read = detail::read_entry_file(path, key_of(kSpec, kSm90).text);
  INFO(path << ": " << read.reason);
  REQUIRE(read.status == detail::EntryRead::Status::ok);
  return read.entry;
}

}  // namespace

TEST_CASE("Jit tiers: miss -> compile -> disk hit in a second Jit -> memory hit", "[cache][jit]") {
  ScratchDir scratch;
  const fs::path root = scratch / "missing" / "nested";  // created on demand
  const JitOptions options = isolated_options(root, scratch / "locks");
  {
    Jit first(options);
    CHECK(first.cache_dir() == root.string());
    const auto compiled = first.compile(kSpec, kSm90);
    CHECK_FALSE(compiled->from_disk);
    CHECK(compiled->path == entry_path_of(root, kSpec, kSm90).string());
    CHECK(compiled->binary == reference().binary);
    const JitCounters c = first.counters();
    CHECK(c.misses == 1);
    CHECK(c.compiles == 1);
    CHECK(c.disk_hits == 0);
    CHECK(c.memory_hits == 0);
    CHECK(c.compile_ms_total > 0.0);
  }
  Jit second(options);
  const auto from_disk = second.compile(kSpec, kSm90);
  CHECK(from_disk->from_disk);
  CHECK(from_disk->binary == reference().binary);
  CHECK(from_disk->roles == reference().roles);
  const auto from_memory = second.compile(kSpec, kSm90);
  CHECK(from_memory.get() == from_disk.get());
  const JitCounters c = second.counters();
  CHECK(c.disk_hits == 1);
  CHECK(c.memory_hits == 1);
  CHECK(c.misses == 0);
  CHECK(c.compiles == 0);
  CHECK(c.corrupt_entries == 0);
  CHECK(c.disk_read_ms_total > 0.0);
  REQUIRE(second.cache_roots().size() == 1);
  CHECK_FALSE(second.cache_roots()[0].read_only);
}

TEST_CASE("Jit: corrupt entries are recompiled and overwritten, never fatal", "[cache][jit]") {
  ScratchDir scratch;
  const JitOptions options = isolated_options(scratch / "root", scratch / "locks");
  const fs::path path = entry_path_of(scratch / "root", kSpec, kSm90);
  {
    Jit jit(options);
    jit.compile(kSpec, kSm90);
  }
  const Bytes good = read_bytes(path);
  REQUIRE(good.size() > 1000);
  const auto wrong_key_entry = [&] {
    detail::CacheEntry entry = valid_entry_at(path);
    entry.key_text += "option --something-else\n";
    return detail::encode_entry(entry);
  };
  const std::vector<std::pair<std::string, Bytes>> faults = {
      {"truncated", Bytes(good.begin(), good.begin() + static_cast<long>(good.size() / 2))},
      {"bit-flipped",
       [&] {
         Bytes b = good;
         b[b.size() / 3] ^= 0x10;
         return b;
       }()},
      {"zero-length", Bytes{}},
      {"wrong magic",
       [&] {
         Bytes b = good;
         b[0] = 'X';
         return b;
       }()},
      {"wrong key", wrong_key_entry()},
  };
  for (const auto& [name, bytes] : faults) {
    SECTION(name) {
      write_bytes(path, bytes);
      LogCapture log;
      Jit jit(options);
      const auto compiled = jit.compile(kSpec, kSm90);
      CHECK(compiled->binary == reference().binary);
      CHECK_FALSE(compiled->from_disk);
      const JitCounters c = jit.counters();
      CHECK(c.corrupt_entries == 1);
      CHECK(c.compiles == 1);
      CHECK(log.count(spdlog::level::warn, path.string()) == 1);
      // Overwritten with a valid entry, and no temp file left behind.
      CHECK(valid_entry_at(path).payload == reference().binary);
      CHECK(temp_files_under(scratch / "root").empty());
      Jit again(options);
      CHECK(again.compile(kSpec, kSm90)->from_disk);
    }
  }
}

TEST_CASE("Jit: a symlink planted at an entry path is replaced, not followed", "[cache][jit]") {
  ScratchDir scratch;
  const fs::path path = entry_path_of(scratch / "root", kSpec, kSm90);
  const fs::path victim = scratch / "victim.txt";
  const Bytes precious = {'p', 'r', 'e', 'c', 'i', 'o', 'u', 's'};
  write_bytes(victim, precious);
  fs::create_directories(path.parent_path());
  fs::create_symlink(victim, path);

  Jit jit(isolated_options(scratch / "root", scratch / "locks"));
  const auto compiled = jit.compile(kSpec, kSm90);
  CHECK(compiled->binary == reference().binary);
  CHECK(jit.counters().corrupt_entries == 1);  // the victim's bytes are no entry
  CHECK(read_bytes(victim) == precious);
  CHECK(fs::is_regular_file(fs::symlink_status(path)));
  CHECK(valid_entry_at(path).payload == reference().binary);
}

TEST_CASE("Jit: cache paths with spaces and non-ASCII characters", "[cache][jit]") {
  ScratchDir scratch("my cache ü ✓/dir with spaces");
  const JitOptions options = isolated_options(scratch.path(), scratch / "lö cks");
  {
    Jit jit(options);
    CHECK(jit.compile(kSpec, kSm90)->path == entry_path_of(scratch.path(), kSpec, kSm90).string());
  }
  Jit again(options);
  CHECK(again.compile(kSpec, kSm90)->from_disk);
  CHECK(again.counters().disk_hits == 1);
}

TEST_CASE("Jit: save_source writes the stamped source next to the entry", "[cache][jit]") {
  ScratchDir scratch;
  JitOptions options = isolated_options(scratch / "root", scratch / "locks");
  options.save_source = true;
  Jit jit(options);
  const fs::path path = jit.compile(kSpec, kSm90)->path;
  fs::path source = path;
  source += ".cu";
  const Bytes text = read_bytes(source);
  CHECK(std::string(text.begin(), text.end()) == stamped_source(kSpec));
  const detail::RootScan scan = detail::scan_root(scratch / "root");
  REQUIRE(scan.entries.size() == 1);
  CHECK(scan.entries[0].has_saved_source);
  CHECK(scan.orphan_sources.empty());
}

TEST_CASE("Jit no_jit: a miss names the variant, the target and every root", "[cache][jit]") {
  ScratchDir scratch;
  JitOptions options = isolated_options(scratch / "root", scratch / "locks");
  options.read_only_dirs = {(scratch / "ro one").string(), (scratch / "ro two").string()};
  options.no_jit = true;
  Jit jit(options);
  try {
    jit.compile(kSpec, kSm90);
    FAIL("compiled although no_jit is set");
  } catch (const Error& e) {
    CHECK(e.code() == ErrorCode::cache_miss_no_jit);
    const std::string what = e.what();
    CHECK_THAT(what, Catch::Contains(format_spec(kSpec)) && Catch::Contains("sm_90") &&
                         Catch::Contains((scratch / "ro one").string()) &&
                         Catch::Contains((scratch / "ro two").string()) &&
                         Catch::Contains((scratch / "root").string()));
  }
  CHECK(jit.counters().misses == 1);
  CHECK(jit.counters().compiles == 0);
  CHECK_FALSE(fs::exists(scratch / "root"));  // no_jit writes nothing, not even the root

  // Once the entry exists (here in the writable root), no_jit finds it.
  {
    Jit writer(isolated_options(scratch / "root", scratch / "locks"));
    writer.compile(kSpec, kSm90);
  }
  Jit reader(options);
  CHECK(reader.compile(kSpec, kSm90)->binary == reference().binary);
  CHECK(reader.counters().disk_hits == 1);
}

TEST_CASE("Jit read-only roots: searched first, never written, corrupt ones skipped",
          "[cache][jit]") {
  ScratchDir scratch;
  const fs::path ro = scratch / "precompiled";
  {
    Jit builder(isolated_options(ro, scratch / "locks"));
    builder.compile(kSpec, kSm90);
  }
  const fs::path ro_entry = entry_path_of(ro, kSpec, kSm90);
  JitOptions options = isolated_options(scratch / "root", scratch / "locks");
  options.read_only_dirs = {(scratch / "absent").string(), ro.string()};

  SECTION("a hit in a read-only root") {
    const auto before = fs::last_write_time(ro_entry);
    Jit jit(options);
    const auto compiled = jit.compile(kSpec, kSm90);
    CHECK(compiled->path == ro_entry.string());
    CHECK(jit.counters().ro_disk_hits == 1);
    CHECK(jit.counters().compiles == 0);
    CHECK(fs::last_write_time(ro_entry) == before);  // no recency written into it
    CHECK(detail::scan_root(scratch / "root").entries.empty());
    const std::vector<CacheRootInfo> roots = jit.cache_roots();
    REQUIRE(roots.size() == 3);
    CHECK(roots[0].read_only);
    CHECK(roots[1].path == ro.string());
    CHECK_FALSE(roots[2].read_only);
  }
  SECTION("a corrupt entry in a read-only root is skipped, not overwritten") {
    Bytes bad = read_bytes(ro_entry);
    bad[bad.size() / 2] ^= 1;
    write_bytes(ro_entry, bad);
    Jit jit(options);
    const auto compiled = jit.compile(kSpec, kSm90);
    CHECK(compiled->binary == reference().binary);
    CHECK(compiled->path == entry_path_of(scratch / "root", kSpec, kSm90).string());
    CHECK(jit.counters().corrupt_entries == 1);
    CHECK(read_bytes(ro_entry) == bad);
  }
  SECTION("the size bound never evicts from a read-only root") {
    options.max_bytes = 1;  // evict everything evictable
    Jit jit(options);
    jit.compile(kOther, kSm90);
    CHECK(fs::exists(ro_entry));
  }
}

TEST_CASE("Jit: a writable root that cannot be created is used read-only with one warning",
          "[cache][jit]") {
  ScratchDir scratch;
  write_bytes(scratch / "file", {'x'});
  // NOTE: we run as root, where permission bits do not stop a write; a path under a regular
  // file cannot be created by anyone (ENOTDIR).
  const fs::path root = scratch / "file" / "cache";
  LogCapture log;
  Jit jit(isolated_options(root, scratch / "locks"));
  const auto a = jit.compile(kSpec, kSm90);
  const auto b = jit.compile(kOther, kSm90);
  CHECK(a->binary == reference().binary);
  CHECK(a->path.empty());
  CHECK(b->path.empty());
  CHECK(log.count(spdlog::level::warn) == 1);
  CHECK(log.count(spdlog::level::warn, root.string()) == 1);
  REQUIRE(jit.cache_roots().size() == 1);
  CHECK(jit.cache_roots()[0].read_only);
  CHECK_THAT(jit.cache_roots()[0].reason, Catch::Contains("Not a directory"));
  CHECK(jit.counters().compiles == 2);
  CHECK(read_bytes(scratch / "file") == Bytes{'x'});
}

TEST_CASE("Jit: an existing directory that cannot be written is used read-only", "[cache][jit]") {
  // NOTE: as root only a kernel-enforced refusal works: /proc/self exists and is a directory,
  // but nobody can create files in it.
  const fs::path root = "/proc/self";
  LogCapture log;
  Jit jit(JitOptions{.cache_dir = root.string()});
  const auto compiled = jit.compile(kSpec, kSm90);
  CHECK(compiled->binary == reference().binary);
  CHECK(compiled->path.empty());
  CHECK(log.count(spdlog::level::warn, "cannot be written") == 1);
  CHECK(jit.cache_roots().back().read_only);
}

TEST_CASE("Jit: a root on a read-only file system is read, never written", "[cache][jit]") {
  ScratchDir scratch;
  const fs::path root = scratch / "root";
  {
    Jit jit(isolated_options(root, scratch / "locks"));
    jit.compile(kSpec, kSm90);
  }
  const Bytes before = read_bytes(entry_path_of(root, kSpec, kSm90));
  // NOTE: a real read-only mount (EROFS), in a child's private mount namespace: a bind mount
  // of the root remounted read-only. Needs CAP_SYS_ADMIN; without it the child says 77.
  constexpr int kNoNamespace = 77;
  const int status = run_in_child([&] {
    if (::unshare(CLONE_NEWNS) != 0) return kNoNamespace;
    if (::mount(nullptr, "/", nullptr, MS_REC | MS_PRIVATE, nullptr) != 0) return kNoNamespace;
    if (::mount(root.c_str(), root.c_str(), nullptr, MS_BIND, nullptr) != 0) return kNoNamespace;
    if (::mount(nullptr, root.c_str(), nullptr, MS_REMOUNT | MS_BIND | MS_RDONLY, nullptr) != 0) {
      return kNoNamespace;
    }
    LogCapture log;
    Jit jit(isolated_options(root, scratch / "locks"));
    if (!jit.cache_roots().back().read_only) return 10;
    if (jit.cache_roots().back().reason.find("Read-only file system") == std::string::npos) {
      return 11;
    }
    if (!jit.compile(kSpec, kSm90)->from_disk) return 12;  // read
    const auto compiled = jit.compile(kOther, kSm90);      // compiled, kept in memory
    if (!compiled->path.empty() || compiled->binary.empty()) return 13;
    if (log.count(spdlog::level::warn) != 1) return 14;
    return jit.counters().disk_hits == 1 && jit.counters().compiles == 1 ? 0 : 15;
  });
  if (status == kNoNamespace) {
    WARN("skipped: no mount namespace here (needs CAP_SYS_ADMIN) to make a read-only mount");
    return;
  }
  CHECK(status == 0);
  CHECK(read_bytes(entry_path_of(root, kSpec, kSm90)) == before);
  CHECK_FALSE(fs::exists(entry_path_of(root, kOther, kSm90)));
}

TEST_CASE("Jit: an unwritable target directory costs one warning and no crash", "[cache][jit]") {
  ScratchDir scratch;
  const fs::path root = scratch / "root";
  fs::create_directories(root);
  write_bytes(root / "sm_90", {'x'});  // where the target directory should be
  LogCapture log;
  Jit jit(isolated_options(root, scratch / "locks"));
  CHECK(jit.compile(kSpec, kSm90)->path.empty());
  CHECK(jit.compile(kOther, kSm90)->path.empty());
  CHECK(jit.counters().write_failures == 2);
  CHECK(log.count(spdlog::level::warn) == 1);
  CHECK(log.count(spdlog::level::warn, (root / "sm_90").string()) == 1);
}

TEST_CASE("Jit: a full disk (RLIMIT_FSIZE) keeps the kernel in memory and the cache valid",
          "[cache][jit]") {
  ScratchDir scratch;
  const JitOptions options = isolated_options(scratch / "root", scratch / "locks");
  {
    Jit jit(options);
    jit.compile(kOther, kSm90);
  }
  const fs::path other = entry_path_of(scratch / "root", kOther, kSm90);
  const Bytes before = read_bytes(other);
  // NOTE: in a child, so that the test runner keeps its limits; SIGXFSZ ignored, so that a
  // write past the limit fails with EFBIG instead of killing the process.
  const int status = run_in_child([&] {
    std::signal(SIGXFSZ, SIG_IGN);
    const rlimit limit{4096, 4096};
    if (::setrlimit(RLIMIT_FSIZE, &limit) != 0) return 10;
    Jit jit(options);
    const auto compiled = jit.compile(kSpec, kSm90);
    if (compiled->binary != reference().binary) return 11;
    if (!compiled->path.empty()) return 12;
    if (jit.counters().write_failures != 1) return 13;
    return jit.compile(kOther, kSm90)->from_disk ? 0 : 14;
  });
  CHECK(status == 0);
  CHECK(temp_files_under(scratch / "root").empty());
  CHECK_FALSE(fs::exists(entry_path_of(scratch / "root", kSpec, kSm90)));
  CHECK(read_bytes(other) == before);
  Jit after(options);
  CHECK(after.compile(kSpec, kSm90)->binary == reference().binary);
}

TEST_CASE("Jit: the size bound evicts least recently used entries", "[cache][jit]") {
  ScratchDir scratch;
  JitOptions options = isolated_options(scratch / "root", scratch / "locks");
  const KernelSpec third = GdnVerifySpec{.k = 3, .io = DType::f32};
  {
    Jit jit(options);
    jit.compile(kSpec, kSm90);
    jit.compile(kOther, kSm90);
  }
  const fs::path first_path = entry_path_of(scratch / "root", kSpec, kSm90);
  const fs::path second_path = entry_path_of(scratch / "root", kOther, kSm90);
  make_old(first_path, 300);
  make_old(second_path, 200);
  // A hit records the use: kSpec becomes the most recent of the two.
  {
    Jit jit(options);
    CHECK(jit.compile(kSpec, kSm90)->from_disk);
  }
  // Room for two entries of about 40 KB, not for three.
  const std::uint64_t two = detail::scan_root(scratch / "root").bytes + 16 * 1024;
  options.max_bytes = two;
  Jit jit(options);
  const auto compiled = jit.compile(third, kSm90);
  CHECK(jit.counters().evictions == 1);
  CHECK(fs::exists(compiled->path));
  CHECK(fs::exists(first_path));
  CHECK_FALSE(fs::exists(second_path));
  CHECK(detail::scan_root(scratch / "root").bytes <= two);
}

TEST_CASE("Jit memory tier: 8 threads asking for 2 variants at once build each once",
          "[cache][jit]") {
  Jit jit(JitOptions{.cache_dir = "", .disk_cache = false});
  std::vector<std::shared_ptr<const CompiledKernel>> got(8 * 20);
  std::vector<std::thread> threads;
  for (std::size_t t = 0; t < 8; ++t) {
    threads.emplace_back([&, t] {
      for (std::size_t i = 0; i < 20; ++i)
        got[t * 20 + i] = jit.compile(i % 2 ? kSpec : kOther, kSm90);
    });
  }
  for (std::thread& t : threads) t.join();
  const JitCounters c = jit.counters();
  CHECK(c.compiles == 2);
  CHECK(c.misses == 2);
  CHECK(c.memory_hits == got.size() - 2);
  for (std::size_t i = 0; i < got.size(); ++i) {
    REQUIRE(got[i] != nullptr);
    CHECK(got[i] == got[i % 2]);  // one object per variant
  }
  CHECK(got[1]->binary == reference().binary);
}
