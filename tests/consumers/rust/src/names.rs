// SPDX-License-Identifier: Apache-2.0
//! Variants as names, through the library's introspection: the families and the fields of one
//! as the library describes them, a name built from field values and read back, and bad names
//! and values refused, named. None of it needs a GPU.

use std::ffi::{c_char, CStr, CString};
use std::mem::size_of;
use std::ptr::null_mut;

use crate::ffi::c::{self, WYJIT_ERROR_INVALID_SPEC};
use crate::ffi::{
    wyjit_family_count, wyjit_family_field, wyjit_family_field_count, wyjit_family_name,
    wyjit_spec_build, wyjit_spec_field, wyjit_spec_validate, FieldInfo,
};
use crate::helpers::{check, cstring, expect, expect_error, text, text_out};
use crate::verify::{FAMILY, VARIANT};

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

/// The checks of FAMILY's fields and names; gives VARIANT, validated, for the checks that follow.
pub fn check_fields_and_names() -> Result<CString, String> {
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

    Ok(variant)
}
