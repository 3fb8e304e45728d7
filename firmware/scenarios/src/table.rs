//! The golden table: every pinned seeded run, written once.
//!
//! The firmware images read it through this crate ([`crate::golden::GOLDEN`] and
//! [`crate::kernels::KERNEL_GOLDEN`] are built from it at compile time, and an entry whose name
//! names no run is a compile error); the host test `tests/tests/golden_host.rs` includes this
//! very file and computes every entry with drivers of its own. The file uses nothing but `core`,
//! so both sides compile it as it is.
//!
//! A change to any value here alters a random stream: it is value-breaking and goes in the
//! changelog. A new run is one entry here, one run in the firmware and one in the host test.

/// A pinned run of a binary kernel on one of the small models (see [`crate::golden`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ModelPin {
    /// The model's short name ([`crate::golden::Model::name`]).
    pub model: &'static str,
    /// The kernel's short name ([`crate::Kernel::name`]).
    pub kernel: &'static str,
    /// The seed of `Xoshiro256PlusPlus::seed_from_u64`.
    pub seed: u64,
    /// FNV-1a over the state bytes after every step.
    pub state: u64,
    /// FNV-1a over the log-density bits after every step.
    pub log_density: u64,
}

/// A pinned run of the kernel table (see [`crate::kernels`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KernelPin {
    /// The run's short name ([`crate::kernels::Run::name`]).
    pub run: &'static str,
    /// The seed of `Xoshiro256PlusPlus::seed_from_u64`.
    pub seed: u64,
    /// FNV-1a over the state after every step.
    pub state: u64,
    /// FNV-1a over the log-density bits (or the step reports) after every step.
    pub second: u64,
}

/// Steps hashed by every pinned run.
pub const STEPS: u32 = 1000;

const fn m(
    model: &'static str,
    kernel: &'static str,
    seed: u64,
    state: u64,
    log_density: u64,
) -> ModelPin {
    ModelPin {
        model,
        kernel,
        seed,
        state,
        log_density,
    }
}

const fn k(run: &'static str, state: u64, second: u64) -> KernelPin {
    KernelPin {
        run,
        seed: 1,
        state,
        second,
    }
}

/// DULA and DMALA on the small models: step 0.5, balance 0.5, from the all-zero state.
#[rustfmt::skip]
pub const MODEL_PINS: [ModelPin; 14] = [
    m("ising8x8", "dula", 1, 0x5ae6_cde4_da3d_bcce, 0x4e1a_7d86_5f1b_30a3),
    m("ising8x8", "dmala", 1, 0x93b9_306c_5105_b2d9, 0xb5b9_9bb7_d5dd_1055),
    m("ising8x8", "dula", 2, 0x41f7_bd03_d5d1_733f, 0x519e_203d_6879_6052),
    m("ising8x8", "dmala", 2, 0xa1d1_91a7_a0a6_5c57, 0x91aa_12b8_60de_e16e),
    m("ising8x8", "dula", 3, 0xb2de_0334_39a4_d619, 0x0123_678a_5442_02bf),
    m("ising8x8", "dmala", 3, 0xedc6_a388_a8f6_a624, 0x2c0d_2831_a41d_dc56),
    m("quadratic16", "dula", 1, 0x8e9e_272e_b59a_1fb2, 0xd908_16c5_0192_9310),
    m("quadratic16", "dmala", 1, 0xc48b_ee3b_cf65_f501, 0x933a_b799_4222_a9e9),
    m("rbm16x8", "dula", 1, 0x0839_dc8a_f2c1_facf, 0x7546_01a1_d449_822f),
    m("rbm16x8", "dmala", 1, 0xdea4_3af6_cc81_7678, 0xc279_bc93_d247_a0f0),
    m("rbm16x8-bf16", "dula", 1, 0x7454_1de8_5a22_21d7, 0x2aa2_06f8_ebbd_9d79),
    m("rbm16x8-bf16", "dmala", 1, 0x853c_9fbc_3d36_c5eb, 0xd4fb_8401_f306_5da0),
    m("graph16", "dula", 1, 0x9c84_ed92_a447_fe18, 0x35ce_b63a_c705_71e8),
    m("graph16", "dmala", 1, 0x698f_c3e9_0199_acbf, 0x45f2_f2bc_75ed_9679),
];

/// Every other kernel of the core, seed 1: the state hash, then the log-density hash (the
/// step-report hash for the continuous integrators).
#[rustfmt::skip]
pub const KERNEL_PINS: [KernelPin; 36] = [
    k("ordinal-dula", 0xb6b4_447a_b072_017e, 0x2e3d_6793_be45_b98f),
    k("ordinal-dmala", 0x72ba_9e91_19ac_ec9b, 0xf206_e81e_b2b1_7223),
    k("ordinal-gibbs", 0x7261_927a_b0ac_e6ee, 0x8b77_4b5b_7658_5633),
    k("categorical-dula", 0x2c0c_5b3b_588d_f215, 0xa314_9a1d_df90_08b9),
    k("categorical-dmala", 0xe534_b7c0_610b_05d6, 0xefdf_2791_897e_b3a8),
    k("categorical-gibbs", 0xd744_633f_e214_bb97, 0xedd0_1682_5e72_dce0),
    k("categorical-gwg", 0x6335_c07b_7ed5_104f, 0x9541_b958_f812_10bb),
    k("lattice-dula", 0xa303_98e6_dcf1_a291, 0x3963_4ab5_99c2_8471),
    k("lattice-dmala", 0xbc00_8775_fc40_49a0, 0xeb7b_39bc_ff01_b0eb),
    k("lattice-dmala-kept", 0xbc00_8775_fc40_49a0, 0xeb7b_39bc_ff01_b0eb),
    k("gibbs", 0x1767_8737_326d_449c, 0xc873_f381_4a68_9d09),
    k("gwg", 0xcf60_c382_a47f_d3fd, 0xa278_e5cc_55df_6a79),
    k("rwm", 0x0e8d_0dd0_0eac_ed27, 0x4c9e_c087_1545_ff3f),
    k("second-order", 0x8580_05ca_15e4_0316, 0x2355_d49b_ed48_9fdb),
    k("lmc", 0x4a47_7b9c_68e0_6f68, 0x84a3_26f5_8606_9045),
    k("sgld", 0x7da1_d79d_21a3_5c30, 0x539c_3c87_f2c9_7be5),
    k("sgld-reshuffle", 0x34de_1750_b72a_5088, 0x539c_3c87_f2c9_7be5),
    k("underdamped", 0x5b90_f442_93d3_8b3e, 0x84a3_26f5_8606_9045),
    k("sghmc", 0x5f6c_6224_a57f_4b20, 0x539c_3c87_f2c9_7be5),
    k("ewsg", 0x3d2a_f485_93cc_8d26, 0xa06f_f65c_55c1_5425),
    k("agld-svrg", 0x2912_4f21_e461_625e, 0x7c76_e40a_88dc_ed88),
    k("agld-saga", 0x2173_1dbd_6cc5_284e, 0xc543_de91_0408_b7b0),
    k("agld-tmu", 0xcaab_a39f_24af_0576, 0x5371_2b45_c830_c7f0),
    k("ordinal-dmala-adapt", 0x4552_eed4_10ad_781b, 0x24f4_45be_037e_b59a),
    k("categorical-dmala-adapt", 0x0f77_239d_8a65_285d, 0xef94_c842_64cd_694f),
    k("pt-dmala", 0x0694_f053_46d3_b756, 0x8d03_bcf3_6c37_b91d),
    k("dmala-adapt", 0x19ed_3fbc_a7e8_4e01, 0x0368_9355_6de4_50d6),
    k("lb", 0x8177_4168_821e_cd5c, 0xfc29_5fff_242c_30f7),
    k("categorical-lb", 0x059d_c07d_d0a9_02df, 0x42b9_914f_beb3_b768),
    k("hamming-ball", 0x7bad_4a34_ecf5_7fed, 0xd793_9598_0658_1b96),
    k("pas", 0x4fd4_251e_d8ba_819a, 0x52b6_6036_9e80_e7ed),
    k("categorical-pas", 0x0922_a429_a43d_9675, 0x45bf_449e_d415_5a82),
    k("dlmc", 0xfe62_d4aa_b77f_e35d, 0xffa2_2284_028e_f7c3),
    k("categorical-dlmc", 0x9df1_437b_cd01_04b6, 0xd3ef_c7a4_9a97_7c2f),
    k("lattice-gibbs", 0x0275_4f1b_a8b3_9223, 0x1ffb_7a00_1ec1_8f12),
    k("lattice-dmala-small", 0xbc00_8775_fc40_49a0, 0x5fad_9870_9730_b504),
];

/// Whether two names are equal (a `const fn`, for the tables built at compile time).
pub const fn same_name(a: &str, b: &str) -> bool {
    let (mut a, mut b) = (a.as_bytes(), b.as_bytes());
    loop {
        match (a, b) {
            ([], []) => return true,
            ([x, ra @ ..], [y, rb @ ..]) if *x == *y => {
                a = ra;
                b = rb;
            }
            _ => return false,
        }
    }
}
