// SPDX-License-Identifier: Apache-2.0
//! One gdn_verify variant: its launch arguments, checked without a GPU, and where a device exists
//! one launch compared against the sequential recurrence in double on the CPU.

use std::ffi::{c_void, CStr};
use std::mem::size_of;
use std::ptr::null_mut;

use crate::device_vec::DeviceVec;
use crate::ffi::c::WYJIT_ERROR_INVALID_ARGUMENT;
use crate::ffi::{
    wyjit_check_gdn_verify, wyjit_device_make_current, wyjit_device_synchronize,
    wyjit_gdn_verify_args_init, wyjit_jit_get_kernel, wyjit_kernel_name, wyjit_launch_gdn_verify,
    GdnVerifyArgs, Jit,
};
use crate::helpers::{check, expect, expect_error, initialised, text_out};

pub const FAMILY: &str = "gdn_verify";
pub const VARIANT: &str = "gdn_verify.k2.io_f32.st_f32.strided.vk.d64";
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
pub fn check_without_gpu(variant: &CStr) -> Result<(), String> {
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

pub fn launch_and_check(jit: *mut Jit, variant: &CStr) -> Result<(), String> {
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
