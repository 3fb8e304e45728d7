//! The same seed and chain count give the same `samples.npy` bytes on 1, 2 and 4 threads.

mod common;

use common::{Scratch, ok};

#[test]
fn thread_count_does_not_change_the_samples() {
    let scratch = Scratch::new("threads");
    // A model big enough that chains take turns on the workers in different orders.
    ok(
        &scratch.0,
        &[
            "model",
            "rbm",
            "--visible",
            "40",
            "--hidden",
            "12",
            "--seed",
            "4",
            "--out",
            "rbm.json",
        ],
    );
    ok(
        &scratch.0,
        &[
            "model",
            "ising-ba",
            "--nodes",
            "60",
            "--edges-per-node",
            "3",
            "--seed",
            "2",
            "--out",
            "ba.json",
        ],
    );
    for model in ["rbm.json", "ba.json"] {
        for sampler in ["dmala", "dula"] {
            let files: Vec<Vec<u8>> = ["1", "2", "4"]
                .iter()
                .map(|threads| {
                    let out = format!("{model}-{sampler}-{threads}.npy");
                    ok(
                        &scratch.0,
                        &[
                            "sample",
                            "--model",
                            model,
                            "--sampler",
                            sampler,
                            "--chains",
                            "5",
                            "--steps",
                            "2000",
                            "--burn-in",
                            "100",
                            "--seed",
                            "21",
                            "--threads",
                            threads,
                            "--out",
                            &out,
                            "--quiet",
                        ],
                    );
                    std::fs::read(scratch.path(&out)).unwrap()
                })
                .collect();
            assert_eq!(files[0], files[1], "{model} {sampler}: 1 vs 2 threads");
            assert_eq!(files[0], files[2], "{model} {sampler}: 1 vs 4 threads");
        }
    }
}
