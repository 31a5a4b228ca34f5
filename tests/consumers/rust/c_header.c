/* SPDX-License-Identifier: Apache-2.0 */
/*
 * Run by build.rs: prints, as Rust source, what src/ffi.rs needs from the installed
 * wyjit/wyjit.h (its constants, and the size, alignment and field offsets of every struct that
 * ffi.rs declares with #[repr(C)]), so that ffi.rs checks its declarations against the C
 * compiler's at compile time instead of trusting a hand-written copy.
 */
#include <stddef.h>
#include <stdio.h>
#include <wyjit/wyjit.h>

#define CONSTANT(rust_type, name) \
  printf("pub const %s: %s = %lld;\n", #name, #rust_type, (long long)(name))

#define BEGIN(type, module)                                                                     \
  printf("pub mod %s {\n    pub const SIZE: usize = %zu;\n    pub const ALIGN: usize = %zu;\n", \
         module, sizeof(type), _Alignof(type))
#define FIELD(type, field) printf("    pub const %s: usize = %zu;\n", #field, offsetof(type, field))
#define END() printf("}\n")

int main(void) {
  CONSTANT(u32, WYJIT_VERSION);
  CONSTANT(i32, WYJIT_OK);
  CONSTANT(i32, WYJIT_ERROR_INVALID_SPEC);
  CONSTANT(i32, WYJIT_ERROR_INVALID_ARGUMENT);
  CONSTANT(i32, WYJIT_FIELD_INTEGER);
  CONSTANT(i32, WYJIT_FIELD_CHOICE);
  CONSTANT(i32, WYJIT_FIELD_FLAG);

  BEGIN(wyjit_jit_options, "jit_options");
  FIELD(wyjit_jit_options, struct_size);
  FIELD(wyjit_jit_options, cache_dir);
  FIELD(wyjit_jit_options, read_only_dirs);
  FIELD(wyjit_jit_options, num_read_only_dirs);
  FIELD(wyjit_jit_options, no_jit);
  FIELD(wyjit_jit_options, disk_cache);
  FIELD(wyjit_jit_options, log_level);
  END();

  BEGIN(wyjit_counters, "counters");
  FIELD(wyjit_counters, struct_size);
  FIELD(wyjit_counters, memory_hits);
  FIELD(wyjit_counters, ro_disk_hits);
  FIELD(wyjit_counters, disk_hits);
  FIELD(wyjit_counters, misses);
  FIELD(wyjit_counters, compiles);
  FIELD(wyjit_counters, corrupt_entries);
  FIELD(wyjit_counters, evictions);
  FIELD(wyjit_counters, write_failures);
  FIELD(wyjit_counters, lock_waits);
  FIELD(wyjit_counters, lock_timeouts);
  FIELD(wyjit_counters, loads);
  FIELD(wyjit_counters, compile_ms_total);
  FIELD(wyjit_counters, disk_read_ms_total);
  FIELD(wyjit_counters, lock_wait_ms_total);
  FIELD(wyjit_counters, load_ms_total);
  END();

  BEGIN(wyjit_field_info, "field_info");
  FIELD(wyjit_field_info, struct_size);
  FIELD(wyjit_field_info, name);
  FIELD(wyjit_field_info, label);
  FIELD(wyjit_field_info, kind);
  FIELD(wyjit_field_info, spelling);
  FIELD(wyjit_field_info, choices);
  FIELD(wyjit_field_info, num_choices);
  FIELD(wyjit_field_info, min);
  FIELD(wyjit_field_info, max);
  FIELD(wyjit_field_info, allowed);
  FIELD(wyjit_field_info, num_allowed);
  FIELD(wyjit_field_info, default_value);
  FIELD(wyjit_field_info, standard);
  FIELD(wyjit_field_info, merged_spelling);
  FIELD(wyjit_field_info, same_as);
  FIELD(wyjit_field_info, doc);
  END();

  BEGIN(wyjit_state_refs, "state_refs");
  FIELD(wyjit_state_refs, state);
  FIELD(wyjit_state_refs, state_seq_stride);
  FIELD(wyjit_state_refs, inter);
  FIELD(wyjit_state_refs, inter_seq_stride);
  FIELD(wyjit_state_refs, inter_tok_stride);
  FIELD(wyjit_state_refs, tables);
  FIELD(wyjit_state_refs, slab_stride);
  FIELD(wyjit_state_refs, slot_stride);
  FIELD(wyjit_state_refs, num_slots);
  FIELD(wyjit_state_refs, read_slot);
  FIELD(wyjit_state_refs, write_slot);
  FIELD(wyjit_state_refs, write_slot_stride);
  END();

  BEGIN(wyjit_gdn_verify_args, "gdn_verify_args");
  FIELD(wyjit_gdn_verify_args, struct_size);
  FIELD(wyjit_gdn_verify_args, batch);
  FIELD(wyjit_gdn_verify_args, num_k_heads);
  FIELD(wyjit_gdn_verify_args, num_v_heads);
  FIELD(wyjit_gdn_verify_args, k);
  FIELD(wyjit_gdn_verify_args, dk);
  FIELD(wyjit_gdn_verify_args, dv);
  FIELD(wyjit_gdn_verify_args, scale);
  FIELD(wyjit_gdn_verify_args, q);
  FIELD(wyjit_gdn_verify_args, k_in);
  FIELD(wyjit_gdn_verify_args, v);
  FIELD(wyjit_gdn_verify_args, g);
  FIELD(wyjit_gdn_verify_args, beta);
  FIELD(wyjit_gdn_verify_args, a);
  FIELD(wyjit_gdn_verify_args, b);
  FIELD(wyjit_gdn_verify_args, a_log);
  FIELD(wyjit_gdn_verify_args, dt_bias);
  FIELD(wyjit_gdn_verify_args, out);
  FIELD(wyjit_gdn_verify_args, qk_stride);
  FIELD(wyjit_gdn_verify_args, v_stride);
  FIELD(wyjit_gdn_verify_args, gb_stride);
  FIELD(wyjit_gdn_verify_args, o_stride);
  FIELD(wyjit_gdn_verify_args, states);
  END();
  return 0;
}
