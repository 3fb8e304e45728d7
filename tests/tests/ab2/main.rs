//! AB-2 (the second-order sampler): its kernels, the quadratic fit, SDP-lite and the diagonal
//! rules.

mod diagonal_rules;
mod quadratic_fit;
mod sdp;
mod second_order_ordinal;
mod second_order_sparse;
