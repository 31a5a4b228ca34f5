// SPDX-License-Identifier: Apache-2.0
//! Calling the C API from Rust: text across the API both ways, statuses with the last error,
//! checks that fail with a message, and the structs of `*_init` functions.

use std::ffi::{c_char, CStr, CString};
use std::ptr::null_mut;

use crate::ffi::{c::WYJIT_OK, wyjit_last_error, wyjit_status_name, Status};

pub fn text(p: *const c_char) -> String {
    if p.is_null() {
        return String::new();
    }
    unsafe { CStr::from_ptr(p) }.to_string_lossy().into_owned()
}

pub fn cstring(s: &str) -> CString {
    CString::new(s).expect("no NUL inside")
}

pub fn check(status: Status, what: &str) -> Result<(), String> {
    if status == WYJIT_OK {
        return Ok(());
    }
    Err(format!(
        "{what} -> {}: {}",
        text(unsafe { wyjit_status_name(status) }),
        text(unsafe { wyjit_last_error() })
    ))
}

pub fn expect(ok: bool, what: &str) -> Result<(), String> {
    if ok {
        Ok(())
    } else {
        Err(format!("check failed: {what}"))
    }
}

/// `status` must be `want`, with `needle` in the message.
pub fn expect_error(status: Status, want: Status, needle: &str, what: &str) -> Result<(), String> {
    let message = text(unsafe { wyjit_last_error() });
    expect(
        status == want && message.contains(needle),
        &format!("{what} (got {status}: {message})"),
    )
}

/// A call that returns text the C API's way (wyjit_spec_build): asks for the length, then
/// fetches exactly that many bytes.
pub fn text_out(
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
pub fn initialised<T>(init: unsafe extern "C" fn(*mut T)) -> T {
    let mut value = std::mem::MaybeUninit::<T>::uninit();
    unsafe {
        init(value.as_mut_ptr());
        value.assume_init()
    }
}
