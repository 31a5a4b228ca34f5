// SPDX-License-Identifier: Apache-2.0
// Links libwyjit.so from the folder in $WYJIT_LIB_DIR (an installed prefix's lib/), with an
// rpath so the program runs without LD_LIBRARY_PATH; and compiles and runs c_header.c against
// the headers in $WYJIT_INCLUDE_DIR (with $CC, default cc), which writes the C API's constants
// and struct layouts as Rust source for src/ffi.rs to check its declarations against.
use std::path::{Path, PathBuf};
use std::process::Command;

// The folder in environment variable `var`, which must hold `file`.
fn folder(var: &str, file: &str, what: &str) -> String {
    println!("cargo:rerun-if-env-changed={var}");
    let dir = match std::env::var(var) {
        Ok(dir) if !dir.is_empty() => dir,
        _ => panic!("set {var} to {what}"),
    };
    if !Path::new(&dir).join(file).exists() {
        panic!("{var}={dir} has no {file}");
    }
    dir
}

fn main() {
    let lib = folder(
        "WYJIT_LIB_DIR",
        "libwyjit.so",
        "the folder holding libwyjit.so (PREFIX/lib)",
    );
    let include = folder(
        "WYJIT_INCLUDE_DIR",
        "wyjit/wyjit.h",
        "the installed headers (PREFIX/include)",
    );
    println!("cargo:rustc-link-search=native={lib}");
    println!("cargo:rustc-link-lib=dylib=wyjit");
    println!("cargo:rustc-link-arg=-Wl,-rpath,{lib}");

    println!("cargo:rerun-if-changed=c_header.c");
    println!("cargo:rerun-if-env-changed=CC");
    let cc = std::env::var("CC").unwrap_or_else(|_| "cc".to_string());
    let out = PathBuf::from(std::env::var("OUT_DIR").expect("cargo sets OUT_DIR"));
    let program = out.join("c_header");
    let status = Command::new(&cc)
        .args([
            "-std=c11",
            "-Wall",
            "-Wextra",
            "-Werror",
            "-I",
            &include,
            "c_header.c",
            "-o",
        ])
        .arg(&program)
        .status()
        .unwrap_or_else(|e| panic!("cannot run the C compiler '{cc}': {e}"));
    assert!(
        status.success(),
        "{cc} could not compile c_header.c against {include}"
    );
    let printed = Command::new(&program)
        .output()
        .unwrap_or_else(|e| panic!("cannot run {}: {e}", program.display()));
    assert!(printed.status.success(), "{} failed", program.display());
    std::fs::write(out.join("c_header.rs"), printed.stdout).expect("write c_header.rs");
}
