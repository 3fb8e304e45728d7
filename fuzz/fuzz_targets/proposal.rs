//! The flip proposal alone: arbitrary states, gradients (NaN, ±∞, huge, subnormal), steps,
//! balances and preconditioners, the random stream from the input. Checks that the draw and
//! `log_q` agree bit for bit, that the flipped list is exactly where the states differ, that
//! `log q ≤ 0`, that NaN logits never flip, that the stream is consumed in a fixed amount, that
//! mismatched lengths are refused, and that the same input gives the same output.
#![no_main]

use langevin_fuzz::{ByteRng, FlipParams, Input, checked_proposal};

fn run(data: &[u8]) -> Vec<u64> {
    let mut input = Input::new(data);
    let FlipParams {
        d,
        step,
        balance,
        pre,
    } = FlipParams::read(&mut input, 64);
    let x: Vec<u8> = (0..d).map(|_| input.u8() & 1).collect();
    let g: Vec<f32> = (0..d).map(|_| input.f32()).collect();
    let short = input.u8().is_multiple_of(8);
    let mut rng = ByteRng::new(input.rest());
    let mut out = Vec::new();

    let Some(p) = checked_proposal(step, balance, pre.as_deref()) else {
        return out;
    };

    let mut y = vec![0u8; d];
    let mut flipped = vec![0u32; d];
    if short {
        // Every buffer of the wrong length is refused before anything is drawn.
        let words = rng.words;
        assert!(
            p.propose(&x, &g[..d - 1], &mut y, &mut flipped, &mut rng)
                .is_err()
        );
        assert!(
            p.propose(&x, &g, &mut y[..d - 1], &mut flipped, &mut rng)
                .is_err()
        );
        assert!(
            p.propose(&x, &g, &mut y, &mut flipped[..d - 1], &mut rng)
                .is_err()
        );
        assert!(p.log_q(&x, &g[..d - 1], &y).is_err());
        assert_eq!(rng.words, words);
        assert!(y.iter().all(|&v| v == 0));
    }
    let words = rng.words;
    let (k, lq) = p
        .propose(&x, &g, &mut y, &mut flipped, &mut rng)
        .expect("consistent lengths");
    assert_eq!(
        rng.words - words,
        d.div_ceil(2) as u64,
        "random words per draw"
    );
    assert!(y.iter().all(|&v| v <= 1));
    let differ: Vec<u32> = (0..d as u32)
        .filter(|&i| x[i as usize] != y[i as usize])
        .collect();
    assert_eq!(&flipped[..k], &differ[..], "flipped list");
    let again = p.log_q(&x, &g, &y).expect("consistent lengths");
    assert!(
        lq.to_bits() == again.to_bits() || (lq.is_nan() && again.is_nan()),
        "{lq} vs {again}"
    );
    assert!(lq.is_nan() || lq <= 0.0, "log q = {lq}");
    for i in 0..d {
        let scale = pre.as_ref().and_then(|p| p.get(i)).copied().unwrap_or(1.0);
        if g[i].is_nan() && scale.is_finite() {
            assert_eq!(x[i], y[i], "a NaN logit flipped coordinate {i}");
        }
    }
    out.push(k as u64);
    out.push(lq.to_bits());
    out.extend(y.iter().map(|&v| u64::from(v)));
    out
}

langevin_fuzz::deterministic_fuzz_target!(run);
