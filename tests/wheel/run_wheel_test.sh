#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# The wheel, as a user gets it: builds it from the repository (pip wheel: scikit-build-core on
# the project's CMake, tests and benchmarks off), installs it into a fresh virtual environment
# with the nvrtc extra (NVIDIA's nvidia-cuda-nvrtc wheel) and pytest, then, from a folder outside
# the repository, with LD_LIBRARY_PATH, CUDA_HOME, CUDA_PATH and every WYJIT_* variable unset:
#   - the installed libwyjit.so and CLI record no RPATH and need neither libnvrtc nor libcuda,
#     spdlog nor fmt (readelf -d);
#   - `wyjit info` names the wheel's NVRTC, chosen by the wheel rule;
#   - `wyjit precompile --arch sm_90 --family gdn_verify --k 4` fills a temporary cache root;
#   - `import wyjit` loads the package's library, nvrtc_info() names the wheel's NVRTC, a Jit
#     precompiles, and every NVRTC file mapped into the process lies in the environment;
#   - the Python CPU tests (tests/python) pass against the installed package.
# Where the machine allows a private mount namespace (root), the CUDA toolkit's library folders
# are also hidden behind an empty tmpfs for those checks, so that nothing can fall back on the
# toolkit (its ld.so.cache entries included); the package's CLI binary then finds no NVRTC on its
# own, which is checked too. Elsewhere the toolkit stays visible to the ld.so cache, and the checks
# above still require the wheel's NVRTC.
#
#   tests/wheel/run_wheel_test.sh REPO WORK_DIR PYTHON [TOOLKIT_LIBRARY_DIR]
#
# WORK_DIR keeps the CMake build of the wheel between runs (incremental); the environment and the
# wheel are made anew each run. Needs PyPI (scikit-build-core, nvidia-cuda-nvrtc, pytest).
set -euo pipefail

log() { echo "wheel-test: $*" >&2; }
die() {
  echo "wheel-test: FAILED: $*" >&2
  exit 1
}

# ---- inside the environment with the toolkit hidden (or not): every check ------------------
if [[ "${1:-}" == "--checks" ]]; then
  root="$2" work="$3" hidden="$4"
  venv="$work/venv"
  site="$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
  scratch="$(mktemp -d "$work/run.XXXXXX")"
  cd "$scratch"

  for f in "$site/wyjit/libwyjit.so" "$site/wyjit/bin/wyjit"; do
    [[ -f "$f" ]] || die "$f is not in the installed package"
    dynamic="$(readelf -d "$f")"
    if grep -Eq 'RPATH|RUNPATH' <<<"$dynamic"; then die "$f records a search path: $dynamic"; fi
    if grep -Eq 'NEEDED.*(libnvrtc|libcuda|spdlog|fmt)' <<<"$dynamic"; then
      die "$f needs a library the wheel does not bring: $dynamic"
    fi
  done
  log "installed library and CLI: no RPATH, no libnvrtc, libcuda, spdlog or fmt"

  if [[ "$hidden" == 1 ]]; then
    # NOTE: the negative control: without the wheel's folder (the console script passes it), the
    # package's CLI finds no NVRTC, so the toolkit really is out of reach.
    none="$("$site/wyjit/bin/wyjit" info)"
    grep -q '^nvrtc: none' <<<"$none" || die "the toolkit's NVRTC is still reachable: $none"
    log "toolkit hidden: the CLI alone finds no NVRTC"
  fi

  info="$("$venv/bin/wyjit" info)"
  echo "$info"
  grep -q "^nvrtc chosen by: nvidia-cuda-nvrtc wheel, found by the Python package" <<<"$info" ||
    die "wyjit info does not name the wheel's NVRTC"
  grep -q "^nvrtc [0-9.]* ($site/nvidia/" <<<"$info" || die "the NVRTC in use is not the venv's"

  out="$("$venv/bin/wyjit" precompile --arch sm_90 --family gdn_verify --k 4 -j 2 \
    --cache-dir "$scratch/cache")"
  echo "$out" | tail -2
  count="$(find "$scratch/cache/sm_90" -name '*.cubin' | wc -l)"
  grep -q "^$count compiled, 0 already cached, 0 failed" <<<"$out" ||
    die "precompile did not compile the $count entries it wrote"
  [[ "$count" -gt 0 ]] || die "precompile wrote no entry"
  log "wyjit precompile: $count cubins in $scratch/cache"

  "$venv/bin/python" - "$site" "$scratch/py-cache" <<'EOF'
import pathlib, sys
site, cache = pathlib.Path(sys.argv[1]).resolve(), sys.argv[2]
import wyjit
assert pathlib.Path(wyjit.__file__).resolve().is_relative_to(site), wyjit.__file__
assert pathlib.Path(wyjit.library_path()).resolve() == site / "wyjit" / "libwyjit.so"
info = wyjit.nvrtc_info()
assert info["rule"] == "nvidia-cuda-nvrtc wheel, found by the Python package", info
assert pathlib.Path(info["path"]).resolve().is_relative_to(site), info
with wyjit.Jit(cache) as jit:
    jit.precompile([wyjit.Spec.make("gdn_verify", k=4, l2norm=True, gating=True)], target="sm_90")
    assert jit.counters()["compiles"] == 1
mapped = {line.split()[-1] for line in open("/proc/self/maps") if "nvrtc" in line}
assert mapped, "no NVRTC mapped after a compile"
for path in mapped:
    assert pathlib.Path(path).resolve().is_relative_to(site), f"{path} is not the venv's"
print("wheel-test: python:", wyjit.library_path(), "NVRTC", info["version"], "from", info["path"])
print("wheel-test: python: mapped", ", ".join(sorted(mapped)))
EOF

  WYJIT_TEST_INSTALLED_PACKAGE=1 PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 PYTHONDONTWRITEBYTECODE=1 \
    "$venv/bin/python" -m pytest -q -rs -p no:cacheprovider "$root/tests/python" \
    --ignore="$root/tests/python/test_gpu.py" || die "the Python tests failed against the wheel"
  rm -rf "$scratch"
  exit 0
fi

# ---- build the wheel, make the environment ------------------------------------------------
[[ $# -ge 3 ]] || die "usage: $0 REPO WORK_DIR PYTHON [TOOLKIT_LIBRARY_DIR]"
root="$(cd "$1" && pwd)"
work="$2"
python="$3"
toolkit_libdir="${4:-}"
mkdir -p "$work"
work="$(cd "$work" && pwd)"

start=$SECONDS
rm -rf "$work/build-env" "$work/dist" "$work/venv"
"$python" -m venv "$work/build-env" || die "'$python -m venv' failed"
log "building the wheel (CMake build in $work/cmake-build)"
CMAKE_BUILD_PARALLEL_LEVEL="${CMAKE_BUILD_PARALLEL_LEVEL:-2}" \
  "$work/build-env/bin/python" -m pip wheel --quiet --disable-pip-version-check --no-deps \
  -w "$work/dist" --config-settings=build-dir="$work/cmake-build" "$root" ||
  die "pip wheel failed"
wheel="$(ls "$work"/dist/wyjit-*.whl)"
log "built $(basename "$wheel") in $((SECONDS - start)) s"

"$python" -m venv "$work/venv" || die "'$python -m venv' failed"
"$work/venv/bin/python" -m pip install --quiet --disable-pip-version-check "${wheel}[nvrtc]" pytest ||
  die "pip could not install the wheel with its nvrtc extra, or pytest (PyPI must be reachable)"
log "installed into a fresh environment: $("$work/venv/bin/python" -m pip list --format=freeze |
  grep -Ei '^(wyjit|nvidia-cuda-nvrtc)=' | tr '\n' ' ')"

# ---- the checks, with no toolkit in any search path --------------------------------------
# The toolkit's folders holding a libnvrtc: the build's, those the ld.so cache names, /usr/local.
hide=()
for dir in "$toolkit_libdir" /usr/local/cuda/lib64 /usr/local/cuda/lib \
  $(ldconfig -p 2>/dev/null | awk '/libnvrtc/ {print $NF}' | xargs -r -n1 dirname); do
  [[ -n "$dir" && -d "$dir" ]] || continue
  real="$(readlink -f "$dir")"
  [[ " ${hide[*]} " == *" $real "* ]] || hide+=("$real")
done
clean=(env -u LD_LIBRARY_PATH -u CUDA_HOME -u CUDA_PATH -u WYJIT_LIBRARY -u WYJIT_NVRTC
  -u WYJIT_NVRTC_WHEEL_DIR -u WYJIT_CACHE_DIR -u WYJIT_CACHE_RO_DIRS -u WYJIT_NO_JIT
  -u PYTHONPATH "PATH=$work/venv/bin:/usr/bin:/bin")
mounts=""
for dir in "${hide[@]}"; do mounts+="mount -t tmpfs -o ro wyjit-no-toolkit '$dir' && "; done
if [[ ${#hide[@]} -gt 0 ]] &&
  unshare -m --propagation private sh -c "${mounts}true" 2>/dev/null; then
  log "hiding the toolkit's libraries (${hide[*]}) in a private mount namespace"
  "${clean[@]}" unshare -m --propagation private sh -c \
    "${mounts}exec bash '$0' --checks '$root' '$work' 1"
else
  log "no private mount namespace here: the ld.so cache still names the toolkit's NVRTC"
  "${clean[@]}" bash "$0" --checks "$root" "$work" 0
fi
log "passed in $((SECONDS - start)) s"
