// SPDX-License-Identifier: Apache-2.0
//! Device memory through the C API, owned by Rust.

use std::ffi::c_void;
use std::ptr::null_mut;

use crate::ffi::{wyjit_mem_alloc, wyjit_mem_free, wyjit_memcpy_dtoh, wyjit_memcpy_htod};
use crate::helpers::check;

/// A device copy of a host slice, freed on drop.
pub struct DeviceVec {
    pub ptr: *mut c_void,
    len: usize,
}

impl DeviceVec {
    pub fn new(host: &[f32]) -> Result<DeviceVec, String> {
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
    pub fn download(&self) -> Result<Vec<f32>, String> {
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
