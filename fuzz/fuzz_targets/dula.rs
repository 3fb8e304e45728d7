//! DULA on a target with arbitrary (tabled) energies, gradients and errors, the random stream
//! taken from the input; invariants checked after every step and reset (see the library).
#![no_main]
libfuzzer_sys::fuzz_target!(|data: &[u8]| langevin_fuzz::kernel_case(data, false));
