//! Shared pieces of the fuzz targets: a reader that turns fuzz bytes into parameters (with a bias
//! towards the values that break numerical code), a random generator whose stream *is* fuzz
//! input, a target whose log-density, gradient and errors are arbitrary functions of the state
//! given by the input, and the kernel driver that checks invariants after every step.

pub mod drive;
pub mod labels;

/// The entry point of a fuzz target whose `run(data)` must be a function of its input: runs it
/// twice on every input and asserts the same output.
#[macro_export]
macro_rules! deterministic_fuzz_target {
    ($run:path) => {
        libfuzzer_sys::fuzz_target!(|data: &[u8]| {
            let first = $run(data);
            assert_eq!(first, $run(data), "same input, different output");
        });
    };
}

/// One case of a fuzz target: runs on its input and returns a transcript of what it observed.
pub type CaseFn = fn(&[u8]) -> Vec<u64>;

/// Runs the case that the first byte of `data` picks (its value modulo the number of cases) on
/// the rest; empty input runs nothing and gives no output.
pub fn pick_case(data: &[u8], cases: &[CaseFn]) -> Vec<u64> {
    match data.split_first() {
        Some((&mode, rest)) => cases[usize::from(mode) % cases.len()](rest),
        None => Vec::new(),
    }
}

use core::convert::Infallible;
use core::fmt;
use langevin_core::binary::{Dmala, Dula, FlipProposal};
use langevin_core::{Binary, BinaryTarget, Kernel, TargetError};
use rand_core::TryRng;

/// `f32` values that break numerical code.
pub const SPECIAL_F32: [f32; 24] = [
    f32::NAN,
    f32::INFINITY,
    f32::NEG_INFINITY,
    0.0,
    -0.0,
    f32::MIN_POSITIVE,
    1e-40,
    -1e-40,
    f32::MAX,
    f32::MIN,
    1e30,
    -1e30,
    700.0,
    -700.0,
    1000.0,
    -1000.0,
    1e-30,
    88.8,
    -88.8,
    104.0,
    -104.0,
    f32::EPSILON,
    1.0,
    -1.0,
];

/// `f64` values that break numerical code (step sizes, balances, log-densities).
pub const SPECIAL_F64: [f64; 24] = [
    f64::NAN,
    f64::INFINITY,
    f64::NEG_INFINITY,
    0.0,
    -0.0,
    f64::MIN_POSITIVE,
    5e-324,
    -1.0,
    f64::MAX,
    f64::MIN,
    1e30,
    1e-30,
    1e300,
    1e-300,
    0.5,
    1.0,
    1.0 + f64::EPSILON,
    1.0 - f64::EPSILON / 2.0,
    2.0,
    1e38,
    1e39,
    -0.5,
    700.0,
    -700.0,
];

/// Sequential reader over fuzz bytes; reads past the end give zeros.
#[derive(Clone, Debug)]
pub struct Input<'a> {
    data: &'a [u8],
    pos: usize,
}

impl<'a> Input<'a> {
    /// Reads `data` from the start.
    pub fn new(data: &'a [u8]) -> Self {
        Self { data, pos: 0 }
    }

    /// One byte.
    pub fn u8(&mut self) -> u8 {
        let b = self.data.get(self.pos).copied().unwrap_or(0);
        self.pos += 1;
        b
    }

    /// A little-endian `u32`.
    pub fn u32(&mut self) -> u32 {
        u32::from_le_bytes([self.u8(), self.u8(), self.u8(), self.u8()])
    }

    /// A little-endian `u64`.
    pub fn u64(&mut self) -> u64 {
        u64::from(self.u32()) | (u64::from(self.u32()) << 32)
    }

    /// A flag.
    pub fn bool(&mut self) -> bool {
        self.u8() & 1 == 1
    }

    /// `yes` or `no`, by a flag ([`Input::bool`]).
    pub fn either<T>(&mut self, yes: T, no: T) -> T {
        if self.bool() { yes } else { no }
    }

    /// Mostly moderate exact values, sometimes any bit pattern, sometimes a special value.
    pub fn f32(&mut self) -> f32 {
        let s = self.u8();
        match s {
            0..=159 => (i32::from(s) - 80) as f32 * 0.125,
            160..=223 => f32::from_bits(self.u32()),
            _ => SPECIAL_F32[usize::from(s - 224) % SPECIAL_F32.len()],
        }
    }

    /// Like [`Input::f32`] for `f64`.
    pub fn f64(&mut self) -> f64 {
        let s = self.u8();
        match s {
            0..=159 => (f64::from(s) - 80.0) * 0.125,
            160..=223 => f64::from_bits(self.u64()),
            _ => SPECIAL_F64[usize::from(s - 224) % SPECIAL_F64.len()],
        }
    }

    /// A state entry: 0 or 1, rarely an invalid value.
    pub fn bit(&mut self) -> u8 {
        let b = self.u8();
        if b >= 250 { b } else { b & 1 }
    }

    /// The bytes not read yet.
    pub fn rest(&self) -> &'a [u8] {
        self.data.get(self.pos..).unwrap_or(&[])
    }
}

/// A generator whose words are the fuzz bytes, then a SplitMix64 sequence once they run out.
#[derive(Clone, Debug)]
pub struct ByteRng<'a> {
    data: &'a [u8],
    pos: usize,
    state: u64,
    /// Words handed out so far.
    pub words: u64,
}

impl<'a> ByteRng<'a> {
    /// A generator reading `data`.
    pub fn new(data: &'a [u8]) -> Self {
        Self {
            data,
            pos: 0,
            state: 0x9e37_79b9_7f4a_7c15,
            words: 0,
        }
    }

    fn word(&mut self) -> u64 {
        self.words += 1;
        if let Some(b) = self.data.get(self.pos..self.pos + 8) {
            self.pos += 8;
            let mut w = [0u8; 8];
            w.copy_from_slice(b);
            return u64::from_le_bytes(w);
        }
        self.state = self.state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
}

impl TryRng for ByteRng<'_> {
    type Error = Infallible;
    fn try_next_u32(&mut self) -> Result<u32, Infallible> {
        Ok(self.word() as u32)
    }
    fn try_next_u64(&mut self) -> Result<u64, Infallible> {
        Ok(self.word())
    }
    fn try_fill_bytes(&mut self, dst: &mut [u8]) -> Result<(), Infallible> {
        for chunk in dst.chunks_mut(8) {
            let w = self.word().to_le_bytes();
            chunk.copy_from_slice(&w[..chunk.len()]);
        }
        Ok(())
    }
}

/// An error of the [`Tabled`] target.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TableError {
    /// Whether the chain may reject the move and go on.
    pub recoverable: bool,
}

impl fmt::Display for TableError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "table error (recoverable: {})", self.recoverable)
    }
}

impl TargetError for TableError {
    fn is_recoverable(&self) -> bool {
        self.recoverable
    }
}

/// The tables of a tabled target, looked up by a hash `h` of the state:
/// `U = u[h mod |u|]`, gradient entry `j` = `g[(h + j) mod |g|]`, an error when `e[h mod |e|]`
/// says so.
#[derive(Clone, Debug)]
pub struct Tables {
    /// Log-density table.
    pub u: Vec<f64>,
    /// Gradient table.
    pub g: Vec<f32>,
    /// Error table: 0 = none, 1 = recoverable, 2 = unrecoverable.
    pub e: Vec<u8>,
}

impl Tables {
    /// Reads the tables from `input`.
    pub fn read(input: &mut Input<'_>) -> Self {
        let nu = 1 + usize::from(input.u8() % 8);
        let ng = 1 + usize::from(input.u8() % 16);
        let ne = 1 + usize::from(input.u8() % 8);
        let u = (0..nu).map(|_| input.f64()).collect();
        let g = (0..ng).map(|_| input.f32()).collect();
        let e = (0..ne)
            .map(|_| match input.u8() {
                0..=239 => 0,
                240..=249 => 1,
                _ => 2,
            })
            .collect();
        Self { u, g, e }
    }

    /// The FNV-1a hash of `bytes`.
    pub fn hash(bytes: impl IntoIterator<Item = u8>) -> usize {
        let mut h = 0xcbf2_9ce4_8422_2325u64;
        for b in bytes {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0000_0100_0000_01b3);
        }
        h as usize
    }

    /// `(U, ∇U)` with `grad_len` gradient entries, or the error, at hash `h`.
    pub fn lookup(&self, h: usize, grad_len: usize) -> Result<(f64, Vec<f32>), TableError> {
        match self.e[h % self.e.len()] {
            1 => return Err(TableError { recoverable: true }),
            2 => return Err(TableError { recoverable: false }),
            _ => {}
        }
        let grad = (0..grad_len)
            .map(|j| self.g[h.wrapping_add(j) % self.g.len()])
            .collect();
        Ok((self.u[h % self.u.len()], grad))
    }
}

/// A target whose log-density, gradient and errors are arbitrary functions of the state, read
/// from [`Tables`] the fuzz input fills, with `h` the FNV-1a hash of `x`. Any value (NaN,
/// ±∞, ±MAX, subnormal) reaches the kernel, yet the target is a function: recomputing at the
/// chain's state must give exactly what the chain caches.
#[derive(Clone, Debug)]
pub struct Tabled {
    /// Dimension.
    pub dim: usize,
    /// The tables.
    pub tables: Tables,
}

impl Tabled {
    /// Reads a target of dimension `dim` from `input`.
    pub fn read(dim: usize, input: &mut Input<'_>) -> Self {
        let tables = Tables::read(input);
        Self { dim, tables }
    }

    /// `(U(x), ∇U(x))` or the error at `x`.
    pub fn at(&self, x: &[u8]) -> Result<(f64, Vec<f32>), TableError> {
        self.tables
            .lookup(Tables::hash(x.iter().copied()), self.dim)
    }
}

impl BinaryTarget for Tabled {
    type Error = TableError;
    fn dim(&self) -> usize {
        self.dim
    }
    fn log_density_and_grad(&mut self, x: &[u8], grad: &mut [f32]) -> Result<f64, TableError> {
        let (u, g) = self.at(x)?;
        grad.copy_from_slice(&g);
        Ok(u)
    }
}

/// Whether `FlipProposal::new(step, balance)` must accept.
pub fn valid_params(step: f64, balance: f64) -> bool {
    step.is_finite() && step > 0.0 && balance > 0.0 && balance <= 1.0
}

/// Whether a preconditioner must be accepted with `step`.
pub fn valid_preconditioner(step: f64, p: &[f32]) -> bool {
    // The f32 per-coordinate penalty 1/(2a) / p² must also be defined (not 0/0 or ∞/∞).
    let half_inv_step = (0.5 / step) as f32;
    p.iter().all(|&pi| {
        let scaled = step * f64::from(pi) * f64::from(pi);
        let half_inv = half_inv_step / (pi * pi);
        pi.is_finite() && pi > 0.0 && scaled.is_finite() && scaled > 0.0 && !half_inv.is_nan()
    })
}

/// Owned chain buffers of any domain (`OwnedBuffers::with_lengths`, or `OwnedBuffers::new` for
/// a binary chain).
pub type OwnedBuffers<V> = langevin_std::run::ChainVecs<V>;

/// The parameters of a flip proposal, read from the input.
#[derive(Clone, Debug)]
pub struct FlipParams {
    /// Dimension.
    pub d: usize,
    /// Step size.
    pub step: f64,
    /// Balance.
    pub balance: f64,
    /// The preconditioner, if any.
    pub pre: Option<Vec<f32>>,
}

impl FlipParams {
    /// Reads a dimension in `1..=max_d`, a step, a balance and (one time in four) a
    /// preconditioner.
    pub fn read(input: &mut Input<'_>, max_d: u8) -> Self {
        let d = 1 + usize::from(input.u8() % max_d);
        let step = input.f64();
        let balance = input.f64();
        let pre = input
            .u8()
            .is_multiple_of(4)
            .then(|| (0..d).map(|_| input.f32()).collect());
        Self {
            d,
            step,
            balance,
            pre,
        }
    }
}

/// A checked flip proposal for `step`, `balance` and (if `pre` is `Some`) a preconditioner:
/// asserts that the constructors accept exactly the valid parameters; `None` if they refuse.
pub fn checked_proposal(step: f64, balance: f64, pre: Option<&[f32]>) -> Option<FlipProposal<'_>> {
    let proposal = FlipProposal::new(step, balance);
    assert_eq!(
        proposal.is_ok(),
        valid_params(step, balance),
        "step {step} balance {balance}"
    );
    let base = proposal.ok()?;
    let Some(pre) = pre else { return Some(base) };
    let p = base.preconditioned(pre);
    assert_eq!(
        p.is_ok(),
        valid_preconditioner(step, pre),
        "preconditioner {pre:?}"
    );
    p.ok()
}

/// Runs the kernel case on `data` twice and checks that both runs agree bit for bit.
pub fn kernel_case(data: &[u8], metropolis: bool) {
    let a = kernel_run(data, metropolis);
    let b = kernel_run(data, metropolis);
    assert_eq!(a, b, "same input, different output");
}

/// One run: constructor checks, then steps (and resets) with invariants after each; returns a
/// transcript of everything observable.
pub fn kernel_run(data: &[u8], metropolis: bool) -> Vec<u64> {
    let mut input = Input::new(data);
    let FlipParams {
        d,
        step,
        balance,
        pre,
    } = FlipParams::read(&mut input, 40);
    let setup = drive::BinarySetup::read_sized(&mut input, d, 24);
    let rng = ByteRng::new(input.rest());

    let Some(proposal) = checked_proposal(step, balance, pre.as_deref()) else {
        return Vec::new();
    };
    let mut kernel_dula = Dula::new(proposal);
    let mut kernel_dmala = Dmala::new(proposal);
    drive::drive_chain::<Binary>(setup, rng, &mut |t, target, chain, rng| {
        let words = rng.words;
        let result = match (metropolis, t % 2 == 0) {
            (true, true) => kernel_dmala.step(target, chain, rng),
            (true, false) => Kernel::step(&mut kernel_dmala, target, chain, rng),
            (false, true) => kernel_dula.step(target, chain, rng),
            (false, false) => Kernel::step(&mut kernel_dula, target, chain, rng),
        };
        // The stream is consumed identically whatever happens: ⌈d/2⌉ + 1 words.
        assert_eq!(
            rng.words - words,
            d.div_ceil(2) as u64 + 1,
            "random words per step"
        );
        if let Ok(r) = &result {
            assert_eq!(r.evaluations, u32::from(r.proposed_flips > 0));
            if r.proposed_flips == 0 {
                assert!(r.accepted && r.rejection.is_none() && r.log_accept_ratio == 0.0);
            }
            if metropolis {
                // Accepted only if log u < ratio with u ≥ 2^-54: never on NaN.
                if r.accepted && r.proposed_flips > 0 {
                    assert!(
                        r.log_accept_ratio > drive::MIN_LOG_U,
                        "accepted at {}",
                        r.log_accept_ratio
                    );
                }
            } else {
                assert_eq!(r.accepted, r.rejection.is_none());
                assert_eq!(
                    r.log_accept_ratio.to_bits(),
                    if r.accepted {
                        0.0f64.to_bits()
                    } else {
                        f64::NEG_INFINITY.to_bits()
                    }
                );
            }
        }
        result
    })
}
