// SPDX-License-Identifier: Apache-2.0
//! A Rust program using wyjit's C API, declared here with `extern "C"` (no crates). Variants
//! cross the API as canonical names: it lists a family's fields through the library's
//! introspection, builds and checks a name, compiles the variant with NVRTC into a fresh cache
//! and checks launch arguments (all of that needs no GPU), and where a CUDA device exists
//! launches one small verify and checks it against a CPU loop.
//!
//!   wyjit-consumer CACHE_DIR

use std::ffi::{c_char, c_void, CStr, CString};
use std::mem::{align_of, offset_of, size_of};
use std::process::ExitCode;
use std::ptr::null_mut;

// ---- the C API (include/wyjit/wyjit.h) ----------------------------------------------------

/// The installed header's constants and struct layouts, as its C compiler sees them (build.rs
/// runs c_header.c). Every constant is used below: one the Rust side lacks is a dead-code
/// warning, i.e. an error under `-D warnings`.
#[allow(non_upper_case_globals)]
mod c {
    include!(concat!(env!("OUT_DIR"), "/c_header.rs"));
}
use c::{WYJIT_ERROR_INVALID_ARGUMENT, WYJIT_ERROR_INVALID_SPEC, WYJIT_OK};

/// Fails the build unless `$rust` has the size, alignment and field offsets of the C struct
/// described by module `c::$c`.
macro_rules! same_layout_as_c {
    ($rust:ty, $c:ident { $($field:ident),* $(,)? }) => {
        const _: () = {
            assert!(
                size_of::<$rust>() == c::$c::SIZE,
                concat!(stringify!($rust), ": size differs from C")
            );
            assert!(
                align_of::<$rust>() == c::$c::ALIGN,
                concat!(stringify!($rust), ": alignment differs from C")
            );
            $(assert!(
                offset_of!($rust, $field) == c::$c::$field,
                concat!(stringify!($rust), ".", stringify!($field), ": offset differs from C")
            );)*
        };
    };
}

/// wyjit_status: a plain i32, never a Rust enum (a value it does not list would be undefined
/// behaviour).
type Status = i32;

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
same_layout_as_c! { JitOptions, jit_options {
    struct_size, cache_dir, read_only_dirs, num_read_only_dirs, no_jit, disk_cache, log_level,
} }

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
same_layout_as_c! { Counters, counters {
    struct_size, memory_hits, ro_disk_hits, disk_hits, misses, compiles, corrupt_entries,
    evictions, write_failures, lock_waits, lock_timeouts, loads, compile_ms_total,
    disk_read_ms_total, lock_wait_ms_total, load_ms_total,
} }

/// One field of a family (wyjit_field_info); every pointer is the library's static storage.
#[repr(C)]
struct FieldInfo {
    struct_size: usize,
    name: *const c_char,
    label: *const c_char,
    kind: i32,
    spelling: *const c_char,
    choices: *const *const c_char,
    num_choices: usize,
    min: i32,
    max: i32,
    allowed: *const i32,
    num_allowed: usize,
    default_value: i32,
    standard: *const c_char,
    merged_spelling: *const c_char,
    same_as: *const c_char,
    doc: *const c_char,
}
same_layout_as_c! { FieldInfo, field_info {
    struct_size, name, label, kind, spelling, choices, num_choices, min, max, allowed, num_allowed,
    default_value, standard, merged_spelling, same_as, doc,
} }

/// Where a launch finds the state tiles (wyjit_state_refs), for every family.
#[repr(C)]
struct StateRefs {
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
same_layout_as_c! { StateRefs, state_refs {
    state, state_seq_stride, inter, inter_seq_stride, inter_tok_stride, tables, slab_stride,
    slot_stride, num_slots, read_slot, write_slot, write_slot_stride,
} }

/// The arguments of one gdn_verify launch (wyjit_gdn_verify_args).
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
    states: StateRefs,
}
same_layout_as_c! { GdnVerifyArgs, gdn_verify_args {
    struct_size, batch, num_k_heads, num_v_heads, k, dk, dv, scale, q, k_in, v, g, beta, a, b,
    a_log, dt_bias, out, qk_stride, v_stride, gb_stride, o_stride, states,
} }

enum Jit {}
enum Kernel {}

extern "C" {
    fn wyjit_version() -> u32;
    fn wyjit_version_string() -> *const c_char;
    fn wyjit_status_name(status: Status) -> *const c_char;
    fn wyjit_last_error() -> *const c_char;
    fn wyjit_family_count() -> usize;
    fn wyjit_family_name(index: usize) -> *const c_char;
    fn wyjit_family_field_count(family: *const c_char, count: *mut usize) -> Status;
    fn wyjit_family_field(family: *const c_char, index: usize, out: *mut FieldInfo) -> Status;
    fn wyjit_spec_build(
        family: *const c_char,
        fields: *const *const c_char,
        values: *const *const c_char,
        count: usize,
        buffer: *mut c_char,
        size: usize,
        length: *mut usize,
    ) -> Status;
    fn wyjit_spec_validate(name: *const c_char) -> Status;
    fn wyjit_spec_field(
        name: *const c_char,
        field: *const c_char,
        buffer: *mut c_char,
        size: usize,
        length: *mut usize,
    ) -> Status;
    fn wyjit_jit_options_init(options: *mut JitOptions);
    fn wyjit_jit_create(options: *const JitOptions, out: *mut *mut Jit) -> Status;
    fn wyjit_jit_destroy(jit: *mut Jit);
    fn wyjit_counters_init(counters: *mut Counters);
    fn wyjit_jit_get_counters(jit: *const Jit, out: *mut Counters) -> Status;
    fn wyjit_precompile(
        jit: *mut Jit,
        names: *const *const c_char,
        count: usize,
        target: *const c_char,
        jobs: i32,
        statuses: *mut Status,
    ) -> Status;
    fn wyjit_jit_get_kernel(jit: *mut Jit, name: *const c_char, out: *mut *mut Kernel) -> Status;
    fn wyjit_kernel_name(
        kernel: *const Kernel,
        buffer: *mut c_char,
        size: usize,
        length: *mut usize,
    ) -> Status;
    fn wyjit_gdn_verify_args_init(args: *mut GdnVerifyArgs);
    fn wyjit_check_gdn_verify(spec: *const c_char, args: *const GdnVerifyArgs) -> Status;
    fn wyjit_launch_gdn_verify(
        kernel: *const Kernel,
        args: *const GdnVerifyArgs,
        stream: *mut c_void,
    ) -> Status;
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

fn cstring(s: &str) -> CString {
    CString::new(s).expect("no NUL inside")
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

/// `status` must be `want`, with `needle` in the message.
fn expect_error(status: Status, want: Status, needle: &str, what: &str) -> Result<(), String> {
    let message = text(unsafe { wyjit_last_error() });
    expect(
        status == want && message.contains(needle),
        &format!("{what} (got {status}: {message})"),
    )
}

/// A call that returns text the C API's way (wyjit_spec_build): asks for the length, then
/// fetches exactly that many bytes.
fn text_out(
    what: &str,
    call: impl Fn(*mut c_char, usize, *mut usize) -> Status,
) -> Result<String, String> {
    let mut length = 0usize;
    check(call(null_mut(), 0, &mut length as *mut usize), what)?;
    let mut buffer = vec![0 as c_char; length + 1];
    check(call(buffer.as_mut_ptr(), buffer.len(), null_mut()), what)?;
    Ok(text(buffer.as_ptr()))
}

/// The struct of a `*_init` function, which sets every field (struct_size first).
fn initialised<T>(init: unsafe extern "C" fn(*mut T)) -> T {
    let mut value = std::mem::MaybeUninit::<T>::uninit();
    unsafe {
        init(value.as_mut_ptr());
        value.assume_init()
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
        check(
            unsafe { wyjit_mem_alloc(bytes, &mut ptr) },
            "wyjit_mem_alloc",
        )?;
        let v = DeviceVec {
            ptr,
            len: host.len(),
        };
        check(
            unsafe { wyjit_memcpy_htod(ptr, host.as_ptr().cast(), bytes) },
            "wyjit_memcpy_htod",
        )?;
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

// ---- the family's fields, from the library -------------------------------------------------

/// Field `index` of `family`, described for people: "k: integer 1..32, default 4".
fn describe_field(family: &CStr, index: usize) -> Result<(String, String), String> {
    let mut f: FieldInfo = unsafe { std::mem::zeroed() };
    f.struct_size = size_of::<FieldInfo>();
    check(
        unsafe { wyjit_family_field(family.as_ptr(), index, &mut f) },
        "wyjit_family_field",
    )?;
    let name = text(f.name);
    let what = match f.kind {
        c::WYJIT_FIELD_INTEGER if f.num_allowed > 0 => {
            let allowed = unsafe { std::slice::from_raw_parts(f.allowed, f.num_allowed) };
            let list: Vec<String> = allowed.iter().map(|v| v.to_string()).collect();
            format!(
                "integer, one of {}, default {}",
                list.join(", "),
                f.default_value
            )
        }
        c::WYJIT_FIELD_INTEGER => {
            format!("integer {}..{}, default {}", f.min, f.max, f.default_value)
        }
        c::WYJIT_FIELD_CHOICE => {
            let choices = unsafe { std::slice::from_raw_parts(f.choices, f.num_choices) };
            let names: Vec<String> = choices.iter().map(|p| text(*p)).collect();
            let default = names
                .get(f.default_value as usize)
                .cloned()
                .unwrap_or_default();
            format!("one of {}, default {default}", names.join(", "))
        }
        c::WYJIT_FIELD_FLAG => format!(
            "flag, default {}",
            if f.default_value != 0 { "on" } else { "off" }
        ),
        other => format!("kind {other}"),
    };
    let spelled = match text(f.spelling) {
        s if s.is_empty() => "the value alone".to_string(),
        s => format!("'{s}' + the value"),
    };
    Ok((
        name,
        format!("{what}; {}; in names: {spelled}", text(f.doc)),
    ))
}

// ---- the program ---------------------------------------------------------------------------

const FAMILY: &str = "gdn_verify";
const VARIANT: &str = "gdn_verify.k2.io_f32.st_f32.strided.vk.d64";
const BATCH: usize = 2;
const K: usize = 2;
const D: usize = 64;
const TILE: usize = D * D;

/// Where one launch's buffers are (device memory, or addresses for checks that never launch).
struct Buffers {
    q: *const c_void,
    k: *const c_void,
    v: *const c_void,
    g: *const f32,
    beta: *const f32,
    out: *mut c_void,
    state: *mut c_void,
    inter: *mut c_void,
}

/// One strided launch of VARIANT over `p`, HK = HV = 1.
fn verify_args(p: &Buffers) -> GdnVerifyArgs {
    let mut args = initialised(wyjit_gdn_verify_args_init);
    args.batch = BATCH as i32;
    args.num_k_heads = 1;
    args.num_v_heads = 1;
    args.k = K as i32;
    args.dk = D as i32;
    args.dv = D as i32;
    args.scale = 1.0 / (D as f32).sqrt();
    args.q = p.q;
    args.k_in = p.k;
    args.v = p.v;
    args.g = p.g;
    args.beta = p.beta;
    args.out = p.out;
    args.qk_stride = D as i64;
    args.v_stride = D as i64;
    args.gb_stride = 1;
    args.o_stride = D as i64;
    // S_b = state + b*state_seq_stride, then the final state written there; the state after
    // token t < K-1 at inter + b*inter_seq_stride + t*inter_tok_stride.
    args.states.state = p.state;
    args.states.state_seq_stride = TILE as i64;
    args.states.inter = p.inter;
    args.states.inter_seq_stride = ((K - 1) * TILE) as i64;
    args.states.inter_tok_stride = TILE as i64;
    args
}

struct Lcg(u64);
impl Lcg {
    fn uniform(&mut self, lo: f32, hi: f32) -> f32 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
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

/// The variant's launch checks without a GPU: good arguments pass, a bad stride is named.
fn check_without_gpu(variant: &CStr) -> Result<(), String> {
    // NOTE: the check reads the argument values only, never the memory: any suitably aligned
    // addresses do (vk rows are read 16 bytes at a time).
    let at = |n: usize| (0x1000_0000 + n * 0x100_0000) as *mut c_void;
    let mut args = verify_args(&Buffers {
        q: at(0),
        k: at(1),
        v: at(2),
        g: at(3) as *const f32,
        beta: at(4) as *const f32,
        out: at(5),
        state: at(6),
        inter: at(7),
    });
    expect(
        args.struct_size == size_of::<GdnVerifyArgs>(),
        "the library's args are this size",
    )?;
    check(
        unsafe { wyjit_check_gdn_verify(variant.as_ptr(), &args) },
        "wyjit_check_gdn_verify",
    )?;
    args.states.inter_tok_stride = 1;
    expect_error(
        unsafe { wyjit_check_gdn_verify(variant.as_ptr(), &args) },
        WYJIT_ERROR_INVALID_ARGUMENT,
        "inter_tok_stride",
        "a bad inter_tok_stride is refused, named",
    )?;
    println!("launch checks: good arguments pass, a bad stride is named");
    Ok(())
}

fn launch_and_check(jit: *mut Jit, variant: &CStr) -> Result<(), String> {
    let rows = BATCH * K;
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
            let norm = row
                .iter()
                .map(|x| (*x as f64) * (*x as f64))
                .sum::<f64>()
                .sqrt();
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
    let state: Vec<f32> = (0..BATCH * TILE).map(|_| rng.uniform(-0.5, 0.5)).collect();
    let inter = vec![0f32; BATCH * (K - 1) * TILE];
    let out = vec![f32::NAN; rows * D];
    let scale = 1.0 / (D as f32).sqrt();

    // Reference: the sequential recurrence in double; layout vk puts (i over dk, j over dv) at
    // j*dk + i.
    let mut want_out = vec![0f64; rows * D];
    let mut want_state = vec![0f64; BATCH * TILE];
    let mut want_inter = vec![0f64; BATCH * (K - 1) * TILE];
    for b in 0..BATCH {
        let mut s: Vec<f64> = state[b * TILE..(b + 1) * TILE]
            .iter()
            .map(|x| *x as f64)
            .collect();
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
                want_out[r * D + j] = (0..D)
                    .map(|i| s[j * D + i] * (scale * q[r * D + i]) as f64)
                    .sum();
            }
            let dst = if t < K - 1 {
                &mut want_inter[(b * (K - 1) + t) * TILE..(b * (K - 1) + t + 1) * TILE]
            } else {
                &mut want_state[b * TILE..(b + 1) * TILE]
            };
            dst.copy_from_slice(&s);
        }
    }

    check(
        unsafe { wyjit_device_make_current(0) },
        "wyjit_device_make_current",
    )?;
    let (d_q, d_k, d_v) = (
        DeviceVec::new(&q)?,
        DeviceVec::new(&k)?,
        DeviceVec::new(&v)?,
    );
    let (d_g, d_beta) = (DeviceVec::new(&g)?, DeviceVec::new(&beta)?);
    let (d_state, d_inter, d_out) = (
        DeviceVec::new(&state)?,
        DeviceVec::new(&inter)?,
        DeviceVec::new(&out)?,
    );
    let mut kernel = null_mut();
    check(
        unsafe { wyjit_jit_get_kernel(jit, variant.as_ptr(), &mut kernel) },
        "wyjit_jit_get_kernel",
    )?;
    let name = text_out("wyjit_kernel_name", |buffer, size, length| unsafe {
        wyjit_kernel_name(kernel, buffer, size, length)
    })?;
    expect(name == VARIANT, "the kernel's name is its variant's")?;

    let args = verify_args(&Buffers {
        q: d_q.ptr,
        k: d_k.ptr,
        v: d_v.ptr,
        g: d_g.ptr as *const f32,
        beta: d_beta.ptr as *const f32,
        out: d_out.ptr,
        state: d_state.ptr,
        inter: d_inter.ptr,
    });
    check(
        unsafe { wyjit_launch_gdn_verify(kernel, &args, null_mut()) },
        "wyjit_launch_gdn_verify",
    )?;
    check(
        unsafe { wyjit_device_synchronize() },
        "wyjit_device_synchronize",
    )?;
    let e_out = max_rel_err(&d_out.download()?, &want_out);
    let e_state = max_rel_err(&d_state.download()?, &want_state);
    let e_inter = max_rel_err(&d_inter.download()?, &want_inter);
    println!(
        "launch: relative error out {e_out:.3e}, final state {e_state:.3e}, intermediate states {e_inter:.3e}"
    );
    expect(
        e_out <= 1e-4 && e_state <= 1e-4 && e_inter <= 1e-4,
        "launch matches the reference",
    )
}

fn run(cache_dir: &str) -> Result<(), String> {
    println!("wyjit {}", text(unsafe { wyjit_version_string() }));
    expect(
        unsafe { wyjit_version() } == c::WYJIT_VERSION,
        "the library is the header's version",
    )?;

    // The families and the fields of one, as the library describes them.
    let families: Vec<String> = (0..unsafe { wyjit_family_count() })
        .map(|i| text(unsafe { wyjit_family_name(i) }))
        .collect();
    println!("families: {}", families.join(", "));
    expect(
        families.iter().any(|f| f == FAMILY),
        "gdn_verify is a family",
    )?;
    let family = cstring(FAMILY);
    let mut count = 0usize;
    check(
        unsafe { wyjit_family_field_count(family.as_ptr(), &mut count) },
        "wyjit_family_field_count",
    )?;
    let mut fields = Vec::new();
    for index in 0..count {
        let (name, what) = describe_field(&family, index)?;
        println!("  {FAMILY}.{name}: {what}");
        fields.push(name);
    }
    expect(
        fields.len() > 2 && fields[0] == "k" && fields[1] == "io",
        "K and the io dtype come first",
    )?;
    expect(
        ["dk", "dv", "l2norm"]
            .iter()
            .all(|f| fields.iter().any(|g| g == f)),
        "dk, dv, l2norm",
    )?;

    // A name from field values (the others at their defaults), and its fields read back.
    let (keys, values): (Vec<CString>, Vec<CString>) =
        [("k", "2"), ("io", "f32"), ("dk", "64"), ("dv", "64")]
            .iter()
            .map(|(f, v)| (cstring(f), cstring(v)))
            .unzip();
    let key_ptrs: Vec<*const c_char> = keys.iter().map(|s| s.as_ptr()).collect();
    let value_ptrs: Vec<*const c_char> = values.iter().map(|s| s.as_ptr()).collect();
    let built = text_out("wyjit_spec_build", |buffer, size, length| unsafe {
        wyjit_spec_build(
            family.as_ptr(),
            key_ptrs.as_ptr(),
            value_ptrs.as_ptr(),
            keys.len(),
            buffer,
            size,
            length,
        )
    })?;
    expect(
        built == VARIANT,
        &format!("wyjit_spec_build gives {VARIANT}, not {built}"),
    )?;
    let variant = cstring(VARIANT);
    check(
        unsafe { wyjit_spec_validate(variant.as_ptr()) },
        "wyjit_spec_validate",
    )?;
    for (field, want) in [
        ("family", FAMILY),
        ("k", "2"),
        ("io", "f32"),
        ("state", "f32"),
        ("l2norm", "off"),
    ] {
        let field_name = cstring(field);
        let got = text_out("wyjit_spec_field", |buffer, size, length| unsafe {
            wyjit_spec_field(variant.as_ptr(), field_name.as_ptr(), buffer, size, length)
        })?;
        expect(
            got == want,
            &format!("field {field} of {VARIANT} is {want}, not {got}"),
        )?;
    }

    // Bad names and values are refused, named.
    let bad = cstring("gdn_verify.k4.io_f32.st_f32.diagonal.vk.d64");
    expect_error(
        unsafe { wyjit_spec_validate(bad.as_ptr()) },
        WYJIT_ERROR_INVALID_SPEC,
        "diagonal",
        "a bad addressing is invalid_spec, named",
    )?;
    let k40 = [cstring("40")];
    let k40_ptrs = [k40[0].as_ptr()];
    expect_error(
        unsafe {
            wyjit_spec_build(
                family.as_ptr(),
                key_ptrs.as_ptr(),
                k40_ptrs.as_ptr(),
                1,
                null_mut(),
                0,
                null_mut(),
            )
        },
        WYJIT_ERROR_INVALID_SPEC,
        "K is 40",
        "K = 40 is invalid_spec, named",
    )?;

    check_without_gpu(&variant)?;

    // NVRTC compile into a fresh cache: needs no GPU.
    let dir = cstring(cache_dir);
    let mut options = initialised(wyjit_jit_options_init);
    options.cache_dir = dir.as_ptr();
    options.no_jit = 0;
    let mut jit = null_mut();
    check(
        unsafe { wyjit_jit_create(&options, &mut jit) },
        "wyjit_jit_create",
    )?;
    let target = cstring("sm_90");
    let result = (|| {
        let names = [variant.as_ptr()];
        let mut statuses = [WYJIT_ERROR_INVALID_ARGUMENT; 1];
        check(
            unsafe {
                wyjit_precompile(
                    jit,
                    names.as_ptr(),
                    names.len(),
                    target.as_ptr(),
                    1,
                    statuses.as_mut_ptr(),
                )
            },
            "wyjit_precompile",
        )?;
        expect(statuses[0] == WYJIT_OK, "the variant's status is ok")?;
        let mut counters = Counters::default();
        unsafe { wyjit_counters_init(&mut counters) };
        check(
            unsafe { wyjit_jit_get_counters(jit, &mut counters) },
            "wyjit_jit_get_counters",
        )?;
        println!(
            "compiled {VARIANT} for sm_90 in {:.0} ms into {cache_dir}",
            counters.compile_ms_total
        );
        expect(counters.compiles == 1, "one NVRTC compile")?;

        let mut devices = 0i32;
        check(
            unsafe { wyjit_device_count(&mut devices) },
            "wyjit_device_count",
        )?;
        if devices == 0 {
            println!(
                "no CUDA device ({}): launch skipped",
                text(unsafe { wyjit_device_unavailable_reason() })
            );
            Ok(())
        } else {
            launch_and_check(jit, &variant)
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
