// SPDX-License-Identifier: Apache-2.0
//! The C API (include/wyjit/wyjit.h), declared with `extern "C"`: every struct this program
//! passes is checked at compile time against the installed header's layout (build.rs).

use std::ffi::{c_char, c_void};
use std::mem::{align_of, offset_of, size_of};

/// The installed header's constants and struct layouts, as its C compiler sees them (build.rs
/// runs c_header.c). Every constant is used by the program: one the Rust side lacks is a
/// dead-code warning, i.e. an error under `-D warnings`.
#[allow(non_upper_case_globals)]
pub mod c {
    include!(concat!(env!("OUT_DIR"), "/c_header.rs"));
}

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
pub type Status = i32;

#[repr(C)]
pub struct JitOptions {
    pub struct_size: usize,
    pub cache_dir: *const c_char,
    pub read_only_dirs: *const *const c_char,
    pub num_read_only_dirs: usize,
    pub no_jit: i32,
    pub disk_cache: i32,
    pub log_level: i32,
}
same_layout_as_c! { JitOptions, jit_options {
    struct_size, cache_dir, read_only_dirs, num_read_only_dirs, no_jit, disk_cache, log_level,
} }

#[repr(C)]
#[derive(Default)]
pub struct Counters {
    pub struct_size: usize,
    pub memory_hits: u64,
    pub ro_disk_hits: u64,
    pub disk_hits: u64,
    pub misses: u64,
    pub compiles: u64,
    pub corrupt_entries: u64,
    pub evictions: u64,
    pub write_failures: u64,
    pub lock_waits: u64,
    pub lock_timeouts: u64,
    pub loads: u64,
    pub compile_ms_total: f64,
    pub disk_read_ms_total: f64,
    pub lock_wait_ms_total: f64,
    pub load_ms_total: f64,
}
same_layout_as_c! { Counters, counters {
    struct_size, memory_hits, ro_disk_hits, disk_hits, misses, compiles, corrupt_entries,
    evictions, write_failures, lock_waits, lock_timeouts, loads, compile_ms_total,
    disk_read_ms_total, lock_wait_ms_total, load_ms_total,
} }

/// One field of a family (wyjit_field_info); every pointer is the library's static storage.
#[repr(C)]
pub struct FieldInfo {
    pub struct_size: usize,
    pub name: *const c_char,
    pub label: *const c_char,
    pub kind: i32,
    pub spelling: *const c_char,
    pub choices: *const *const c_char,
    pub num_choices: usize,
    pub min: i32,
    pub max: i32,
    pub allowed: *const i32,
    pub num_allowed: usize,
    pub default_value: i32,
    pub standard: *const c_char,
    pub merged_spelling: *const c_char,
    pub same_as: *const c_char,
    pub doc: *const c_char,
}
same_layout_as_c! { FieldInfo, field_info {
    struct_size, name, label, kind, spelling, choices, num_choices, min, max, allowed, num_allowed,
    default_value, standard, merged_spelling, same_as, doc,
} }

/// Where a launch finds the state tiles (wyjit_state_refs), for every family.
#[repr(C)]
pub struct StateRefs {
    pub state: *mut c_void,
    pub state_seq_stride: i64,
    pub inter: *mut c_void,
    pub inter_seq_stride: i64,
    pub inter_tok_stride: i64,
    pub tables: *const *mut c_void,
    pub slab_stride: i64,
    pub slot_stride: i64,
    pub num_slots: i32,
    pub read_slot: *const i32,
    pub write_slot: *const i32,
    pub write_slot_stride: i64,
}
same_layout_as_c! { StateRefs, state_refs {
    state, state_seq_stride, inter, inter_seq_stride, inter_tok_stride, tables, slab_stride,
    slot_stride, num_slots, read_slot, write_slot, write_slot_stride,
} }

/// The arguments of one gdn_verify launch (wyjit_gdn_verify_args).
#[repr(C)]
pub struct GdnVerifyArgs {
    pub struct_size: usize,
    pub batch: i32,
    pub num_k_heads: i32,
    pub num_v_heads: i32,
    pub k: i32,
    pub dk: i32,
    pub dv: i32,
    pub scale: f32,
    pub q: *const c_void,
    pub k_in: *const c_void,
    pub v: *const c_void,
    pub g: *const f32,
    pub beta: *const f32,
    pub a: *const c_void,
    pub b: *const c_void,
    pub a_log: *const f32,
    pub dt_bias: *const f32,
    pub out: *mut c_void,
    pub qk_stride: i64,
    pub v_stride: i64,
    pub gb_stride: i64,
    pub o_stride: i64,
    pub states: StateRefs,
}
same_layout_as_c! { GdnVerifyArgs, gdn_verify_args {
    struct_size, batch, num_k_heads, num_v_heads, k, dk, dv, scale, q, k_in, v, g, beta, a, b,
    a_log, dt_bias, out, qk_stride, v_stride, gb_stride, o_stride, states,
} }

pub enum Jit {}
pub enum Kernel {}

extern "C" {
    pub fn wyjit_version() -> u32;
    pub fn wyjit_version_string() -> *const c_char;
    pub fn wyjit_status_name(status: Status) -> *const c_char;
    pub fn wyjit_last_error() -> *const c_char;
    pub fn wyjit_family_count() -> usize;
    pub fn wyjit_family_name(index: usize) -> *const c_char;
    pub fn wyjit_family_field_count(family: *const c_char, count: *mut usize) -> Status;
    pub fn wyjit_family_field(family: *const c_char, index: usize, out: *mut FieldInfo) -> Status;
    pub fn wyjit_spec_build(
        family: *const c_char,
        fields: *const *const c_char,
        values: *const *const c_char,
        count: usize,
        buffer: *mut c_char,
        size: usize,
        length: *mut usize,
    ) -> Status;
    pub fn wyjit_spec_validate(name: *const c_char) -> Status;
    pub fn wyjit_spec_field(
        name: *const c_char,
        field: *const c_char,
        buffer: *mut c_char,
        size: usize,
        length: *mut usize,
    ) -> Status;
    pub fn wyjit_jit_options_init(options: *mut JitOptions);
    pub fn wyjit_jit_create(options: *const JitOptions, out: *mut *mut Jit) -> Status;
    pub fn wyjit_jit_destroy(jit: *mut Jit);
    pub fn wyjit_counters_init(counters: *mut Counters);
    pub fn wyjit_jit_get_counters(jit: *const Jit, out: *mut Counters) -> Status;
    pub fn wyjit_precompile(
        jit: *mut Jit,
        names: *const *const c_char,
        count: usize,
        target: *const c_char,
        jobs: i32,
        statuses: *mut Status,
    ) -> Status;
    pub fn wyjit_jit_get_kernel(
        jit: *mut Jit,
        name: *const c_char,
        out: *mut *mut Kernel,
    ) -> Status;
    pub fn wyjit_kernel_name(
        kernel: *const Kernel,
        buffer: *mut c_char,
        size: usize,
        length: *mut usize,
    ) -> Status;
    pub fn wyjit_gdn_verify_args_init(args: *mut GdnVerifyArgs);
    pub fn wyjit_check_gdn_verify(spec: *const c_char, args: *const GdnVerifyArgs) -> Status;
    pub fn wyjit_launch_gdn_verify(
        kernel: *const Kernel,
        args: *const GdnVerifyArgs,
        stream: *mut c_void,
    ) -> Status;
    pub fn wyjit_device_count(count: *mut i32) -> Status;
    pub fn wyjit_device_unavailable_reason() -> *const c_char;
    pub fn wyjit_device_make_current(ordinal: i32) -> Status;
    pub fn wyjit_device_synchronize() -> Status;
    pub fn wyjit_mem_alloc(bytes: usize, out: *mut *mut c_void) -> Status;
    pub fn wyjit_mem_free(ptr: *mut c_void) -> Status;
    pub fn wyjit_memcpy_htod(dst: *mut c_void, src: *const c_void, bytes: usize) -> Status;
    pub fn wyjit_memcpy_dtoh(dst: *mut c_void, src: *const c_void, bytes: usize) -> Status;
}
