// SPDX-License-Identifier: Apache-2.0
//! A Rust program using wyjit's C API, declared in ffi.rs with `extern "C"` (no crates). Variants
//! cross the API as canonical names: it lists a family's fields through the library's
//! introspection, builds and checks a name, compiles the variant with NVRTC into a fresh cache
//! and checks launch arguments (all of that needs no GPU), and where a CUDA device exists
//! launches one small verify and checks it against a CPU loop.
//!
//!   wyjit-consumer CACHE_DIR

mod device_vec;
mod ffi;
mod helpers;
mod names;
mod verify;

use std::process::ExitCode;
use std::ptr::null_mut;

use ffi::c::{self, WYJIT_ERROR_INVALID_ARGUMENT, WYJIT_OK};
use ffi::{
    wyjit_counters_init, wyjit_device_count, wyjit_device_unavailable_reason, wyjit_jit_create,
    wyjit_jit_destroy, wyjit_jit_get_counters, wyjit_jit_options_init, wyjit_precompile,
    wyjit_version, wyjit_version_string, Counters,
};
use helpers::{check, cstring, expect, initialised, text};
use names::check_fields_and_names;
use verify::{check_without_gpu, launch_and_check, VARIANT};

fn run(cache_dir: &str) -> Result<(), String> {
    println!("wyjit {}", text(unsafe { wyjit_version_string() }));
    expect(
        unsafe { wyjit_version() } == c::WYJIT_VERSION,
        "the library is the header's version",
    )?;

    let variant = check_fields_and_names()?;
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
