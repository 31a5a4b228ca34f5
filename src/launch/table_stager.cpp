// SPDX-License-Identifier: Apache-2.0
// TableStager: the fixed device buffer that table addressing reads its tile pointers from.
//
// Layout: `writes` slabs of max_batch pointers; slab 0 holds S_b, slab 1+t the tile of write t.
//
//   tables: [writes][max_batch] void*   entry (s, b) at tables + s*max_batch + b
//
// NOTE: a captured graph keeps reading the same address, so restaging between replays on the
// replay stream is ordered after the previous replay and before the next one. Restaging on
// another stream would race with a replay still running.
#include "wyjit/table_stager.hpp"

#include <cstdint>
#include <string>

#include "common/log.hpp"
#include "driver/driver_api.hpp"
#include "wyjit/error.hpp"

namespace wyjit {

namespace {

constexpr int kMaxWrites = 32;

std::string hex(std::uintptr_t value) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string text;
  do {
    text.insert(text.begin(), kDigits[value % 16]);
    value /= 16;
  } while (value != 0);
  return "0x" + text;
}

CUdeviceptr device_address(const void* p) { return reinterpret_cast<CUdeviceptr>(p); }

}  // namespace

TableStager::TableStager(int writes, int max_batch) : writes_(writes), max_batch_(max_batch) {
  const std::string where = "TableStager(writes " + std::to_string(writes) + ", max_batch " +
                            std::to_string(max_batch) + ")";
  if (writes < 1 || writes > kMaxWrites) {
    throw Error(ErrorCode::invalid_argument,
                where + ": writes is " + std::to_string(writes) +
                    ", must be 1..32 (the tiles a sequence writes per launch, e.g. the K of a "
                    "gdn_verify variant)");
  }
  if (max_batch < 1) {
    throw Error(ErrorCode::invalid_argument,
                where + ": max_batch is " + std::to_string(max_batch) + ", must be >= 1");
  }
  CUcontext context = nullptr;
  WYJIT_CU_CHECK(cuCtxGetCurrent(&context));
  if (context == nullptr) {
    throw Error(ErrorCode::driver, where +
                                       " needs a current CUDA context on the calling thread "
                                       "(cuCtxSetCurrent, or any CUDA runtime call, makes one)");
  }
  const std::size_t entries =
      static_cast<std::size_t>(writes) * static_cast<std::size_t>(max_batch);
  CUdeviceptr buffer = 0;
  WYJIT_CU_CHECK(cuMemAlloc(&buffer, entries * sizeof(void*)));
  // NOTE: every entry starts null (a padded sequence: the kernel skips it), so a launch before
  // the first stage() reads no garbage pointer. The memset runs on the legacy default stream,
  // asynchronously: wait for it, or a stage() on a non-blocking stream could land first.
  CUresult zeroed = detail::driver().cuMemsetD32(buffer, 0, entries * sizeof(void*) / 4);
  if (zeroed == CUDA_SUCCESS) zeroed = detail::driver().cuStreamSynchronize(nullptr);
  if (zeroed != CUDA_SUCCESS) {
    detail::driver().cuMemFree(buffer);
    detail::throw_cu_error(__FILE__, __LINE__, "cuMemsetD32(tables)", zeroed);
  }
  tables_ = reinterpret_cast<void* const*>(buffer);
}

TableStager::~TableStager() {
  if (tables_ == nullptr) return;
  try {
    const detail::DriverApi& d = detail::driver();
    const CUdeviceptr buffer = device_address(tables_);
    // NOTE: free in the context that owns the buffer, whatever is current on this thread.
    CUcontext owner = nullptr;
    const bool pushed =
        d.cuPointerGetAttribute(&owner, CU_POINTER_ATTRIBUTE_CONTEXT, buffer) == CUDA_SUCCESS &&
        owner != nullptr && d.cuCtxPushCurrent(owner) == CUDA_SUCCESS;
    const CUresult freed = d.cuMemFree(buffer);
    if (pushed) {
      CUcontext popped = nullptr;
      d.cuCtxPopCurrent(&popped);
    }
    // NOTE: at process exit the driver may be torn down first; nothing is left to free then.
    if (freed != CUDA_SUCCESS && freed != CUDA_ERROR_DEINITIALIZED) {
      detail::logger().warn("TableStager: cuMemFree of the tables at {} failed with error {}",
                            hex(buffer), static_cast<int>(freed));
    }
  } catch (...) {
    // A destructor never throws; the driver is gone, so is the buffer.
  }
}

void TableStager::check_stage(int writes, int max_batch, void* const* states,
                              void* const* const* inter, int batch) {
  auto fail = [&](const std::string& what) {
    throw Error(ErrorCode::invalid_argument, "TableStager::stage(writes " + std::to_string(writes) +
                                                 ", max_batch " + std::to_string(max_batch) +
                                                 "): " + what);
  };
  if (batch < 1 || batch > max_batch) {
    fail("batch is " + std::to_string(batch) + ", must be 1..max_batch (" +
         std::to_string(max_batch) + ")");
  }
  if (states == nullptr) {
    fail(
        "states is null (want an array of batch state pointers; a null entry pads that "
        "sequence)");
  }
  if (writes > 1) {
    if (inter == nullptr) {
      fail("inter is null (want writes-1 = " + std::to_string(writes - 1) +
           " arrays of batch tile pointers; null entries skip those tiles)");
    }
    for (int t = 0; t + 1 < writes; ++t) {
      if (inter[t] == nullptr) {
        fail("inter[" + std::to_string(t) + "] is null (want an array of batch pointers; " +
             "null entries skip those states)");
      }
    }
  }
  // NOTE: null entries are padding (DESIGN.md, pointer tables): a null states[b] skips
  // sequence b whole, a null inter[t][b] skips writing that tile. Both are the kernels'
  // behaviour (common/state_refs.cuh); nothing else about an entry can be checked here.
}

void TableStager::stage(void* const* states, void* const* const* inter, int batch,
                        CUstream stream) {
  // Every check before the first copy: on an error nothing is staged.
  check_stage(writes_, max_batch_, states, inter, batch);
  CUstreamCaptureStatus capture = CU_STREAM_CAPTURE_STATUS_NONE;
  WYJIT_CU_CHECK(cuStreamIsCapturing(stream, &capture));
  if (capture != CU_STREAM_CAPTURE_STATUS_NONE) {
    throw Error(ErrorCode::invalid_argument,
                "TableStager::stage(writes " + std::to_string(writes_) + ", max_batch " +
                    std::to_string(max_batch_) + "): the stream " +
                    hex(reinterpret_cast<std::uintptr_t>(stream)) +
                    " is being captured: staging copies host memory, which a graph would replay "
                    "stale; stage between replays, on the replay stream");
  }

  const CUdeviceptr base = device_address(tables_);
  const std::size_t slab_bytes = static_cast<std::size_t>(max_batch_) * sizeof(void*);
  const std::size_t bytes = static_cast<std::size_t>(batch) * sizeof(void*);
  WYJIT_CU_CHECK(cuMemcpyHtoDAsync(base, states, bytes, stream));
  for (int t = 0; t + 1 < writes_; ++t) {
    WYJIT_CU_CHECK(cuMemcpyHtoDAsync(base + (t + 1) * slab_bytes, inter[t], bytes, stream));
  }
  if (batch < max_batch_) {
    // NOTE: entries past `batch` become null in every slab, so a graph captured for a larger
    // batch skips those sequences instead of writing through the previous step's pointers.
    static_assert(sizeof(void*) % 4 == 0);
    const std::size_t tail_words = (slab_bytes - bytes) / 4;
    WYJIT_CU_CHECK(cuMemsetD2D32Async(base + bytes, slab_bytes, 0, tail_words,
                                      static_cast<std::size_t>(writes_), stream));
  }
}

}  // namespace wyjit
