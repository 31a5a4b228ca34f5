// SPDX-License-Identifier: Apache-2.0
//! A Rust program using wyjit's C API, declared here with `extern "C"` (no crates): parses a
//! spec, compiles the variant with NVRTC into a fresh cache (no GPU needed), and where a CUDA
//! device exists launches one small verify and checks it against a CPU loop.
//!
//!   wyjit-consumer CACHE_DIR

use std::ffi::{c_char, c_void, CStr, CString};
use std::process::ExitCode;
use std::ptr::null_mut;

// ---- the C API (include/wyjit/wyjit.h) ----------------------------------------------------

type Status = i32;
const WYJIT_OK: Status = 0;
const WYJIT_ERROR_INVALID_SPEC: Status = 1;
const WYJIT_DTYPE_F32: i32 = 0;
const WYJIT_VERSION: u32 = 1_000; // 0.1.0 as MAJOR * 1000000 + MINOR * 1000 + PATCH

#[repr(C)]
#[derive(Default, Clone, Copy)]
struct Spec {
    family: i32,
    k: i32,
    io: i32,
    state: i32,
    addressing: i32,
    layout: i32,
    dk: i32,
    dv: i32,
    l2norm_qk: i32,
    fused_gating: i32,
    width: i32,
    weight: i32,
    bias: i32,
    silu: i32,
    rollback: i32,
}

#[repr(C)]
struct JitOptions {
    struct_size: usize,
    cache_dir: *const c_char,
    read_only_dirs: *const *const c_char,
    num_read_only_dirs: usize,
    no_jit: i32,
    disk_cache: i32,
    log_level: i32,
}

#[repr(C)]
#[derive(Default)]
struct Counters {
    struct_size: usize,
    memory_hits: u64,
    ro_disk_hits: u64,
    disk_hits: u64,
    misses: u64,
    compiles: u64,
    corrupt_entries: u64,
    evictions: u64,
    write_failures: u64,
    lock_waits: u64,
    lock_timeouts: u64,
    loads: u64,
    compile_ms_total: f64,
    disk_read_ms_total: f64,
    lock_wait_ms_total: f64,
    load_ms_total: f64,
}

#[repr(C)]
struct GdnVerifyArgs {
    struct_size: usize,
    batch: i32,
    num_k_heads: i32,
    num_v_heads: i32,
    k: i32,
    dk: i32,
    dv: i32,
    scale: f32,
    q: *const c_void,
    k_in: *const c_void,
    v: *const c_void,
    g: *const f32,
    beta: *const f32,
    a: *const c_void,
    b: *const c_void,
    a_log: *const f32,
    dt_bias: *const f32,
    out: *mut c_void,
    qk_stride: i64,
    v_stride: i64,
    gb_stride: i64,
    o_stride: i64,
    state: *mut c_void,
    state_seq_stride: i64,
    inter: *mut c_void,
    inter_seq_stride: i64,
    inter_tok_stride: i64,
    tables: *const *mut c_void,
    slab_stride: i64,
    slot_stride: i64,
    num_slots: i32,
    read_slot: *const i32,
    write_slot: *const i32,
    write_slot_stride: i64,
}

enum Jit {}
enum Kernel {}

extern "C" {
    fn wyjit_version() -> u32;
    fn wyjit_version_string() -> *const c_char;
    fn wyjit_status_name(status: Status) -> *const c_char;
    fn wyjit_last_error() -> *const c_char;
    fn wyjit_spec_parse(name: *const c_char, out: *mut Spec) -> Status;
    fn wyjit_spec_format(spec: *const Spec, buffer: *mut c_char, size: usize, length: *mut usize)
        -> Status;
    fn wyjit_jit_options_init(options: *mut JitOptions);
    fn wyjit_jit_create(options: *const JitOptions, out: *mut *mut Jit) -> Status;
    fn wyjit_jit_destroy(jit: *mut Jit);
    fn wyjit_counters_init(counters: *mut Counters);
    fn wyjit_jit_get_counters(jit: *const Jit, out: *mut Counters) -> Status;
    fn wyjit_precompile(
        jit: *mut Jit,
        specs: *const Spec,
        count: usize,
        target: *const c_char,
        jobs: i32,
        statuses: *mut Status,
    ) -> Status;
    fn wyjit_jit_get_kernel(jit: *mut Jit, spec: *const Spec, out: *mut *mut Kernel) -> Status;
    fn wyjit_gdn_verify_args_init(args: *mut GdnVerifyArgs);
    fn wyjit_launch_gdn_verify(kernel: *const Kernel, args: *const GdnVerifyArgs, stream: *mut c_void)
        -> Status;
    fn wyjit_device_count(count: *mut i32) -> Status;
    fn wyjit_device_unavailable_reason() -> *const c_char;
    fn wyjit_device_make_current(ordinal: i32) -> Status;
    fn wyjit_device_synchronize() -> Status;
    fn wyjit_mem_alloc(bytes: usize, out: *mut *mut c_void) -> Status;
    fn wyjit_mem_free(ptr: *mut c_void) -> Status;
    fn wyjit_memcpy_htod(dst: *mut c_void, src: *const c_void, bytes: usize) -> Status;
    fn wyjit_memcpy_dtoh(dst: *mut c_void, src: *const c_void, bytes: usize) -> Status;
}

// ---- safe-ish helpers ----------------------------------------------------------------------

fn text(p: *const c_char) -> String {
    if p.is_null() {
        return String::new();
    }
    unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
}

fn check(status: Status, what: &str) -> Result<(), String> {
    if status == WYJIT_OK {
        return Ok(());
    }
    Err(format!(
        "{what} -> {}: {}",
        text(unsafe { wyjit_status_name(status) }),
        text(unsafe { wyjit_last_error() })
    ))
}

fn expect(ok: bool, what: &str) -> Result<(), String> {
    if ok {
        Ok(())
    } else {
        Err(format!("check failed: {what}"))
    }
}

/// A device copy of a host slice, freed on drop.
struct DeviceVec {
    ptr: *mut c_void,
    len: usize,
}

impl DeviceVec {
    fn new(host: &[f32]) -> Result<DeviceVec, String> {
        let bytes = std::mem::size_of_val(host);
        let mut ptr = null_mut();
        check(unsafe { wyjit_mem_alloc(bytes, &mut ptr) }, "wyjit_mem_alloc")?;
        let v = DeviceVec { ptr, len: host.len() };
        check(unsafe { wyjit_memcpy_htod(ptr, host.as_ptr().cast(), bytes) }, "wyjit_memcpy_htod")?;
        Ok(v)
    }
    fn download(&self) -> Result<Vec<f32>, String> {
        let mut host = vec![0f32; self.len];
        let bytes = std::mem::size_of_val(host.as_slice());
        check(
            unsafe { wyjit_memcpy_dtoh(host.as_mut_ptr().cast(), self.ptr, bytes) },
            "wyjit_memcpy_dtoh",
        )?;
        Ok(host)
    }
}

impl Drop for DeviceVec {
    fn drop(&mut self) {
        unsafe { wyjit_mem_free(self.ptr) };
    }
}

// ---- the program ---------------------------------------------------------------------------

const VARIANT: &str = "gdn_verify.k2.io_f32.st_f32.strided.vk.d64";
const BATCH: usize = 2;
const K: usize = 2;
const D: usize = 64;

struct Lcg(u64);
impl Lcg {
    fn uniform(&mut self, lo: f32, hi: f32) -> f32 {
        self.0 = self.0.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        lo + (hi - lo) * ((self.0 >> 40) & 0xff_ffff) as f32 / 16_777_216.0
    }
}

fn max_rel_err(got: &[f32], want: &[f64]) -> f64 {
    let mut err = 0f64;
    let mut reference = 1e-30f64;
    for (g, w) in got.iter().zip(want) {
        let e = (*g as f64 - w).abs();
        if !(e <= err) {
            err = e; // NaN propagates
        }
        reference = reference.max(w.abs());
    }
    err / reference
}

fn launch_and_check(jit: *mut Jit, spec: &Spec) -> Result<(), String> {
    let rows = BATCH * K;
    let tile = D * D;
    let mut rng = Lcg(99);
    let mut q = vec![0f32; rows * D];
    let mut k = vec![0f32; rows * D];
    let mut v = vec![0f32; rows * D];
    let mut g = vec![0f32; rows];
    let mut beta = vec![0f32; rows];
    for r in 0..rows {
        for m in [&mut q, &mut k] {
            let row = &mut m[r * D..(r + 1) * D];
            for x in row.iter_mut() {
                *x = rng.uniform(-1.0, 1.0);
            }
            let norm = row.iter().map(|x| (*x as f64) * (*x as f64)).sum::<f64>().sqrt();
            for x in row.iter_mut() {
                *x = (*x as f64 / norm) as f32;
            }
        }
        for j in 0..D {
            v[r * D + j] = rng.uniform(-1.0, 1.0);
        }
        g[r] = rng.uniform(-1.0, -0.01);
        beta[r] = rng.uniform(0.05, 0.95);
    }
    let state: Vec<f32> = (0..BATCH * tile).map(|_| rng.uniform(-0.5, 0.5)).collect();
    let inter = vec![0f32; BATCH * (K - 1) * tile];
    let out = vec![f32::NAN; rows * D];
    let scale = 1.0 / (D as f32).sqrt();

    // Reference: the sequential recurrence in double; layout vk puts (i over dk, j over dv) at
    // j*dk + i.
    let mut want_out = vec![0f64; rows * D];
    let mut want_state = vec![0f64; BATCH * tile];
    let mut want_inter = vec![0f64; BATCH * (K - 1) * tile];
    for b in 0..BATCH {
        let mut s: Vec<f64> = state[b * tile..(b + 1) * tile].iter().map(|x| *x as f64).collect();
        for t in 0..K {
            let r = b * K + t;
            let decay = (g[r] as f64).exp();
            s.iter_mut().for_each(|x| *x *= decay);
            let mut u = vec![0f64; D];
            for j in 0..D {
                let pred: f64 = (0..D).map(|i| s[j * D + i] * k[r * D + i] as f64).sum();
                u[j] = beta[r] as f64 * (v[r * D + j] as f64 - pred);
            }
            for j in 0..D {
                for i in 0..D {
                    s[j * D + i] += k[r * D + i] as f64 * u[j];
                }
            }
            for j in 0..D {
                want_out[r * D + j] =
                    (0..D).map(|i| s[j * D + i] * (scale * q[r * D + i]) as f64).sum();
            }
            let dst = if t < K - 1 {
                &mut want_inter[(b * (K - 1) + t) * tile..(b * (K - 1) + t + 1) * tile]
            } else {
                &mut want_state[b * tile..(b + 1) * tile]
            };
            dst.copy_from_slice(&s);
        }
    }

    check(unsafe { wyjit_device_make_current(0) }, "wyjit_device_make_current")?;
    let (d_q, d_k, d_v) = (DeviceVec::new(&q)?, DeviceVec::new(&k)?, DeviceVec::new(&v)?);
    let (d_g, d_beta) = (DeviceVec::new(&g)?, DeviceVec::new(&beta)?);
    let (d_state, d_inter, d_out) =
        (DeviceVec::new(&state)?, DeviceVec::new(&inter)?, DeviceVec::new(&out)?);
    let mut kernel = null_mut();
    check(unsafe { wyjit_jit_get_kernel(jit, spec, &mut kernel) }, "wyjit_jit_get_kernel")?;

    let mut args = std::mem::MaybeUninit::<GdnVerifyArgs>::uninit();
    unsafe { wyjit_gdn_verify_args_init(args.as_mut_ptr()) };
    let mut args = unsafe { args.assume_init() };
    args.batch = BATCH as i32;
    args.num_k_heads = 1;
    args.num_v_heads = 1;
    args.k = K as i32;
    args.dk = D as i32;
    args.dv = D as i32;
    args.scale = scale;
    args.q = d_q.ptr;
    args.k_in = d_k.ptr;
    args.v = d_v.ptr;
    args.g = d_g.ptr as *const f32;
    args.beta = d_beta.ptr as *const f32;
    args.out = d_out.ptr;
    args.qk_stride = D as i64;
    args.v_stride = D as i64;
    args.gb_stride = 1;
    args.o_stride = D as i64;
    args.state = d_state.ptr;
    args.state_seq_stride = tile as i64;
    args.inter = d_inter.ptr;
    args.inter_seq_stride = ((K - 1) * tile) as i64;
    args.inter_tok_stride = tile as i64;
    check(unsafe { wyjit_launch_gdn_verify(kernel, &args, null_mut()) }, "wyjit_launch_gdn_verify")?;
    check(unsafe { wyjit_device_synchronize() }, "wyjit_device_synchronize")?;
    let e_out = max_rel_err(&d_out.download()?, &want_out);
    let e_state = max_rel_err(&d_state.download()?, &want_state);
    let e_inter = max_rel_err(&d_inter.download()?, &want_inter);
    println!(
        "launch: relative error out {e_out:.3e}, final state {e_state:.3e}, intermediate states {e_inter:.3e}"
    );
    expect(e_out <= 1e-4 && e_state <= 1e-4 && e_inter <= 1e-4, "launch matches the reference")
}

fn run(cache_dir: &str) -> Result<(), String> {
    println!("wyjit {}", text(unsafe { wyjit_version_string() }));
    expect(unsafe { wyjit_version() } == WYJIT_VERSION, "library version 0.1.0")?;

    // Spec names round-trip; a bad one is refused with the field named.
    let name = CString::new(VARIANT).unwrap();
    let mut spec = Spec::default();
    check(unsafe { wyjit_spec_parse(name.as_ptr(), &mut spec) }, "wyjit_spec_parse")?;
    expect(spec.k == K as i32 && spec.io == WYJIT_DTYPE_F32 && spec.dk == D as i32, "parsed fields")?;
    let mut buffer = [0 as c_char; 128];
    check(
        unsafe { wyjit_spec_format(&spec, buffer.as_mut_ptr(), buffer.len(), null_mut()) },
        "wyjit_spec_format",
    )?;
    expect(text(buffer.as_ptr()) == VARIANT, "the name round-trips")?;
    let bad = CString::new("gdn_verify.k4.io_f32.st_f32.diagonal.vk.d64").unwrap();
    let mut ignored = Spec::default();
    expect(
        unsafe { wyjit_spec_parse(bad.as_ptr(), &mut ignored) } == WYJIT_ERROR_INVALID_SPEC,
        "a bad addressing is invalid_spec",
    )?;
    expect(text(unsafe { wyjit_last_error() }).contains("diagonal"), "the message names it")?;

    // NVRTC compile into a fresh cache: needs no GPU.
    let dir = CString::new(cache_dir).map_err(|e| e.to_string())?;
    let mut options = std::mem::MaybeUninit::<JitOptions>::uninit();
    unsafe { wyjit_jit_options_init(options.as_mut_ptr()) };
    let mut options = unsafe { options.assume_init() };
    options.cache_dir = dir.as_ptr();
    options.no_jit = 0;
    let mut jit = null_mut();
    check(unsafe { wyjit_jit_create(&options, &mut jit) }, "wyjit_jit_create")?;
    let target = CString::new("sm_90").unwrap();
    let result = (|| {
        check(
            unsafe { wyjit_precompile(jit, &spec, 1, target.as_ptr(), 1, null_mut()) },
            "wyjit_precompile",
        )?;
        let mut counters = Counters::default();
        unsafe { wyjit_counters_init(&mut counters) };
        check(unsafe { wyjit_jit_get_counters(jit, &mut counters) }, "wyjit_jit_get_counters")?;
        println!(
            "compiled {VARIANT} for sm_90 in {:.0} ms into {cache_dir}",
            counters.compile_ms_total
        );
        expect(counters.compiles == 1, "one NVRTC compile")?;

        let mut devices = 0i32;
        check(unsafe { wyjit_device_count(&mut devices) }, "wyjit_device_count")?;
        if devices == 0 {
            println!(
                "no CUDA device ({}): launch skipped",
                text(unsafe { wyjit_device_unavailable_reason() })
            );
            Ok(())
        } else {
            launch_and_check(jit, &spec)
        }
    })();
    unsafe { wyjit_jit_destroy(jit) };
    result
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().collect();
    if args.len() != 2 {
        eprintln!("usage: {} CACHE_DIR", args[0]);
        return ExitCode::from(2);
    }
    match run(&args[1]) {
        Ok(()) => {
            println!("Rust consumer: OK");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("FAILED: {e}");
            ExitCode::FAILURE
        }
    }
}
