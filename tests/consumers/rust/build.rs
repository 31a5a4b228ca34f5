// SPDX-License-Identifier: Apache-2.0
// Links libwyjit.so from the folder in $WYJIT_LIB_DIR (an installed prefix's lib/), with an
// rpath so the program runs without LD_LIBRARY_PATH.
fn main() {
    println!("cargo:rerun-if-env-changed=WYJIT_LIB_DIR");
    let dir = match std::env::var("WYJIT_LIB_DIR") {
        Ok(dir) if !dir.is_empty() => dir,
        _ => panic!("set WYJIT_LIB_DIR to the folder holding libwyjit.so (e.g. PREFIX/lib)"),
    };
    if !std::path::Path::new(&dir).join("libwyjit.so").exists() {
        panic!("WYJIT_LIB_DIR={dir} has no libwyjit.so");
    }
    println!("cargo:rustc-link-search=native={dir}");
    println!("cargo:rustc-link-lib=dylib=wyjit");
    println!("cargo:rustc-link-arg=-Wl,-rpath,{dir}");
}
