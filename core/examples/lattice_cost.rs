//! Instruction counts of the tabulated lattice kernels under callgrind:
//! `STEP BURN STEPS ADJUSTED [COUPLING FIELD]` (20×20 periodic lattice, balance 0.5; by default
//! the critical coupling 0.4407 and no field); the steps after burn-in run in `measured`, for
//! `valgrind --tool=callgrind --toggle-collect='*measured*'`.
use langevin_core::binary::{
    BinaryChain, ChainStorage, LatticeDmala, LatticeDula, LatticeProposal,
};
use langevin_core::models::{ConstDims, IsingLattice};
use rand_core::SeedableRng;
use rand_xoshiro::Xoshiro256PlusPlus;

#[inline(never)]
fn measured<F: FnMut() -> u32>(steps: u32, mut step: F) -> u32 {
    (0..steps).map(|_| step()).sum()
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let arg = |i: usize, d: f64| args.get(i).and_then(|s| s.parse().ok()).unwrap_or(d);
    let (step, burn, steps, adjusted) = (
        arg(1, 0.2),
        arg(2, 2000.0) as u32,
        arg(3, 1000.0) as u32,
        arg(4, 1.0) > 0.5,
    );
    let (coupling, field) = (arg(5, 0.4407) as f32, arg(6, 0.0) as f32);
    let mut model = IsingLattice::<ConstDims<20, 20>>::new(coupling, field, true).unwrap();
    let mut storage = ChainStorage::<400>::new([0; 400]);
    let mut chain = BinaryChain::new(storage.buffers(), &mut model).unwrap();
    let p = LatticeProposal::new(&model, step, 0.5).unwrap();
    let (dmala, dula) = (LatticeDmala::new(p), LatticeDula::new(p));
    let mut rng = Xoshiro256PlusPlus::seed_from_u64(7);
    let one = |chain: &mut BinaryChain<'_>, rng: &mut Xoshiro256PlusPlus| {
        let r = if adjusted {
            dmala.step(chain, rng)
        } else {
            dula.step(chain, rng)
        }
        .unwrap();
        r.proposed_flips
    };
    let warm: u32 = (0..burn).map(|_| one(&mut chain, &mut rng)).sum();
    let flips = measured(steps, || one(&mut chain, &mut rng));
    println!(
        "step {step}: {:.1} flips/step (burn-in {:.1})",
        f64::from(flips) / f64::from(steps),
        f64::from(warm) / f64::from(burn.max(1))
    );
}
