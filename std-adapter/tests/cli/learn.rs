//! `langevin ais` and `langevin train`: the summary's fields, AIS against the exact value, the
//! trained model loading in `sample`, thread independence and bad input.

use crate::common;

use common::{RBM, Scratch};
use langevin_std::io::npy::NpyData;

/// 40 rows of 6 binary values with some structure.
fn data(s: &Scratch, name: &str) -> String {
    let values: Vec<u8> = (0..240)
        .map(|k| u8::from(k % 3 == 0 || k % 7 == 1))
        .collect();
    s.npy(name, &[40, 6], NpyData::U8(values));
    name.to_string()
}

fn summary(s: &Scratch, name: &str) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(s.path(name)).unwrap()).unwrap()
}

#[test]
fn ais_reports_log_z_within_its_error_bars_of_the_exact_value() {
    let s = Scratch::new("ais");
    s.write("rbm.json", RBM);
    let d = data(&s, "x.npy");
    let line = format!(
        "ais --model rbm.json --data {d} --chains 200 --betas 300 --seed 3 --summary a.json --quiet"
    );
    s.ok(&line);
    let a = summary(&s, "a.json");
    let (z, se, exact) = (
        a["log_z"].as_f64().unwrap(),
        a["log_z_stderr"].as_f64().unwrap(),
        a["exact_log_z"].as_f64().unwrap(),
    );
    // 4 standard errors: a false alarm has probability 6·10⁻⁵ under the normal approximation.
    assert!(se > 0.0 && se < 0.05, "{se}");
    assert!((z - exact).abs() <= 4.0 * se, "{z} ± {se} vs {exact}");
    let ll = a["mean_log_likelihood"].as_f64().unwrap();
    let exact_ll = a["exact_mean_log_likelihood"].as_f64().unwrap();
    assert!((ll - exact_ll - (exact - z)).abs() < 1e-9);
    assert!(ll < 0.0 && ll > -6.0 * 2f64.ln(), "{ll}");
}

#[test]
fn a_trained_model_loads_in_sample_and_does_not_depend_on_the_thread_count() {
    let s = Scratch::new("train");
    let d = data(&s, "x.npy");
    let run = |model: &str, threads: usize, out: &str| {
        let line = format!(
            "train --data {d} --test {d} {model} --sampler dmala --pcd-steps 5 --chains 8 \
             --batch 10 --lr 0.05 --updates 30 --eval-every 10 --seed 2 --threads {threads} \
             --out {out} --log {out}.csv --quiet"
        );
        s.ok(&line);
        std::fs::read(s.path(out)).unwrap()
    };
    for model in [
        "--model-kind rbm --hidden 3",
        "--model-kind ising --graph lattice:2:3:open",
    ] {
        let one = run(model, 1, "m1.json");
        assert_eq!(one, run(model, 2, "m2.json"), "{model}");
        s.ok("sample --model m1.json --steps 20 --chains 2 --quiet");
        let log = std::fs::read_to_string(s.path("m1.json.csv")).unwrap();
        let rows: Vec<&str> = log.lines().collect();
        assert_eq!(rows.len(), 4, "{log}");
        assert!(rows[0].starts_with("update,wall_time_s,acceptance,log_likelihood"));
        // The test log-likelihood is exact here (small layers) and finite.
        let ll: f64 = rows[3].split(',').nth(3).unwrap().parse().unwrap();
        assert!(ll.is_finite() && ll < 0.0, "{log}");
    }
}

#[test]
fn bad_input_to_learning_is_one_clear_line() {
    let s = Scratch::new("learn-bad");
    s.write("rbm.json", RBM);
    let d = data(&s, "x.npy");
    s.npy("wide.npy", &[2, 7], NpyData::U8(vec![0; 14]));
    s.npy("twos.npy", &[2, 6], NpyData::U8(vec![2; 12]));
    let cases: &[(&str, &str)] = &[
        ("ais --model rbm.json --data wide.npy", "visible units"),
        ("ais --model rbm.json --chains 1", "--chains"),
        (
            "train --data twos.npy --model-kind rbm --hidden 2 --out m.json",
            "expected 0 or 1",
        ),
        (
            "train --data x.npy --model-kind rbm --out m.json",
            "--hidden",
        ),
        (
            "train --data x.npy --model-kind ising --out m.json",
            "--graph",
        ),
        (
            "train --data x.npy --model-kind ising --graph ring:6 --out m.json",
            "lattice:ROWS:COLS",
        ),
        (
            "train --data x.npy --model-kind ising --graph lattice:2:2 --out m.json",
            "dimension",
        ),
        (
            "train --data x.npy --model-kind rbm --hidden 2 --sampler ab2 --out m.json",
            "ab2",
        ),
        (
            "train --data x.npy --model-kind rbm --hidden 2 --lr -1 --out m.json",
            "learning rate",
        ),
        (
            "train --data x.npy --model-kind rbm --hidden 2 --sampler pt-dmala --out m.json",
            "pt-dmala",
        ),
        (
            "train --data x.npy --model-kind ising --graph lattice:2:3 --sampler block-gibbs \
             --out m.json",
            "RBM models only",
        ),
    ];
    let _ = d;
    for (line, part) in cases {
        let msg = s.fails(line);
        assert!(
            msg.starts_with("error: ") && msg.contains(part),
            "{line}: {msg}"
        );
        assert!(!s.path("m.json").exists(), "{line}");
    }
}

#[test]
fn rbms_train_with_block_gibbs() {
    let s = Scratch::new("train-block-gibbs");
    let d = data(&s, "x.npy");
    let line = format!(
        "train --data {d} --test {d} --model-kind rbm --hidden 3 --sampler block-gibbs \
         --pcd-steps 2 --chains 8 --batch 10 --lr 0.05 --updates 30 --eval-every 30 --seed 2 \
         --out m.json --log m.csv --quiet"
    );
    s.ok(&line);
    let log = std::fs::read_to_string(s.path("m.csv")).unwrap();
    let last: Vec<&str> = log.lines().last().unwrap().split(',').collect();
    // Block Gibbs never rejects; the exact test log-likelihood is finite.
    assert_eq!(last[2].parse::<f64>().unwrap(), 1.0, "{log}");
    assert!(last[3].parse::<f64>().unwrap().is_finite(), "{log}");
    s.ok("sample --model m.json --sampler block-gibbs --steps 20 --chains 2 --quiet");
}
