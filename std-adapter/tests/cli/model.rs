//! `langevin model` and `langevin bench` end to end.

use crate::common;

use common::{Scratch, contains_all, ok, samples, words};
use langevin_std::models::ModelDoc;

/// Sampling arguments shared by the comparisons below.
fn sample(scratch: &Scratch, model: &str, out: &str) -> Vec<u8> {
    scratch.ok(&format!(
        "sample --model {model} --steps 200 --burn-in 20 --chains 2 --seed 9 --out {out} --quiet"
    ));
    std::fs::read(scratch.path(out)).unwrap()
}

#[test]
fn binary_generators_feed_sample_and_npy_files_change_nothing() {
    let scratch = Scratch::new("gen");
    let generators: [(&str, &[&str], usize); 4] = [
        (
            "ba",
            &words("ising-ba --nodes 40 --edges-per-node 3 --coupling 0.3"),
            40,
        ),
        ("lat", &["ising-lattice", "--rows", "4", "--cols", "6"], 24),
        ("rbm", &["rbm", "--visible", "12", "--hidden", "5"], 12),
        ("bq", &["binary-quadratic", "--dim", "9"], 9),
    ];
    for (name, args, d) in generators {
        let mut inline: Vec<&str> = vec!["model"];
        inline.extend(args);
        inline.extend(["--seed", "3"].iter().filter(|_| name != "lat"));
        // Printed and written forms are the same text.
        let printed = ok(&scratch.0, &inline);
        let json = format!("{name}.json");
        let mut to_file = inline.clone();
        to_file.extend(["--out", &json]);
        assert_eq!(ok(&scratch.0, &to_file), "");
        assert_eq!(
            std::fs::read_to_string(scratch.path(&json)).unwrap(),
            printed
        );
        // With --npy, into a subfolder: the arrays land beside the JSON.
        std::fs::create_dir_all(scratch.path("split")).unwrap();
        let split = format!("split/{name}.json");
        let mut to_npy = inline.clone();
        to_npy.extend(["--out", &split, "--npy"]);
        ok(&scratch.0, &to_npy);
        let doc = ModelDoc::read(&scratch.path(&split)).unwrap();
        for (field, value) in &doc.fields {
            if let Some(file) = value.as_str().filter(|f| f.ends_with(".npy")) {
                assert_eq!(file, format!("{name}_{field}.npy"));
                assert!(scratch.path("split").join(file).exists());
            }
        }
        let a = sample(&scratch, &json, &format!("{name}-inline.npy"));
        let b = sample(&scratch, &split, &format!("{name}-split.npy"));
        assert_eq!(a, b, "{name}: .npy arrays changed the draws");
        assert_eq!(
            samples(&scratch.path(&format!("{name}-inline.npy"))).0[2],
            d
        );
    }
}

#[test]
fn seeds_fix_the_models() {
    let scratch = Scratch::new("genseed");
    for (generator, small) in [
        ("ising-ba", "--nodes 30"),
        ("rbm", "--visible 8 --hidden 4"),
        ("binary-quadratic", "--dim 8"),
        ("binary-logistic", "--dim 8"),
        ("lattice-gaussian", "--dim 8"),
    ] {
        let run = |seed: &str| scratch.ok(&format!("model {generator} --seed {seed} {small}"));
        assert_eq!(run("1"), run("1"), "{generator}");
        assert_ne!(run("1"), run("2"), "{generator}");
    }
}

#[test]
fn paper_models_have_the_documented_fields() {
    let scratch = Scratch::new("paper");
    let read = |args: &[&str]| {
        let text = ok(&scratch.0, args);
        let doc = ModelDoc::parse(&text, scratch.0.clone()).unwrap();
        (text, doc)
    };
    let (_, ba) = read(&words(
        "model ising-ba --nodes 400 --edges-per-node 4 --coupling 0.4407 --seed 1",
    ));
    assert_eq!(ba.kind, "ising");
    assert_eq!(ba.count("n").unwrap(), 400);
    let (edges, cols, data) = ba.matrix("edges").unwrap();
    assert_eq!((edges, cols), (4 * (400 - 4), 3));
    assert!(data.chunks_exact(3).all(|e| e[2] as f32 == 0.4407f32));
    let (_, blr) = read(&["model", "binary-logistic", "--seed", "1"]);
    assert_eq!(blr.kind, "binary_logistic");
    assert_eq!(blr.array("X").unwrap().0, vec![50, 100]);
    assert!(
        blr.vector("y")
            .unwrap()
            .iter()
            .all(|&y| y == 0.0 || y == 1.0)
    );
    let (_, gauss) = read(&["model", "lattice-gaussian", "--sparse-cycle", "--seed", "1"]);
    assert_eq!(gauss.kind, "ordinal_quadratic");
    assert_eq!(gauss.count("states").unwrap(), 21);
    let (d, _, a) = gauss.matrix("A").unwrap();
    assert_eq!(d, 100);
    let nonzero = a.iter().filter(|&&x| x != 0.0).count();
    assert_eq!(nonzero, 3 * 100, "tridiagonal with wrap");
    let (_, rotated) = read(&["model", "lattice-gaussian", "--rotated", "--dim", "10"]);
    assert!(rotated.matrix("A").unwrap().2.iter().all(|&x| x != 0.0));
    let (_, mix) = read(&["model", "lattice-mixture", "--distance", "squared"]);
    assert_eq!(mix.kind, "lattice_mixture");
    assert_eq!(mix.count("states").unwrap(), 450);
    assert_eq!(mix.array("modes").unwrap().0, vec![25, 2]);
    assert_eq!(mix.get("distance").unwrap(), "squared");
    assert_eq!(mix.number("scale").unwrap(), 3.75);
}

#[test]
fn rbm_from_given_weights() {
    let scratch = Scratch::new("given");
    use langevin_std::io::npy::NpyData;
    let w = scratch.npy(
        "w.npy",
        &[2, 3],
        NpyData::F32(vec![0.5, -1.0, 0.25, 0.0, 1.5, -0.5]),
    );
    let c = scratch.npy("c.npy", &[2], NpyData::F64(vec![0.125, -0.25]));
    let text = scratch.ok(&format!(
        "model rbm --weights {} --hidden-bias {}",
        w.display(),
        c.display()
    ));
    let doc = ModelDoc::parse(&text, scratch.0.clone()).unwrap();
    assert_eq!(
        doc.matrix("W").unwrap(),
        (2, 3, vec![0.5, -1.0, 0.25, 0.0, 1.5, -0.5])
    );
    assert_eq!(doc.vector("b").unwrap(), vec![0.0; 3]);
    assert_eq!(doc.vector("c").unwrap(), vec![0.125, -0.25]);
}

#[test]
fn bench_reports_step_cost_and_ess() {
    let scratch = Scratch::new("bench");
    scratch.ok("model ising-lattice --rows 8 --cols 8 --out m.json");
    let args = [
        "bench",
        "--model",
        "m.json",
        "--sampler",
        "dula",
        "--step",
        "0.3",
        "--steps",
        "500",
        "--repeats",
        "5",
        "--ess-steps",
        "400",
        "--chains",
        "2",
    ];
    let table = ok(&scratch.0, &args);
    contains_all(
        &table,
        &[
            "ns per step",
            "ns per coordinate-step",
            "ESS per second",
            "median",
        ],
    );
    let mut json = args.to_vec();
    json.extend(["--format", "json"]);
    let v: serde_json::Value = serde_json::from_str(&ok(&scratch.0, &json)).unwrap();
    let (min, median, max) = (
        v["ns_per_step_min"].as_f64().unwrap(),
        v["ns_per_step_median"].as_f64().unwrap(),
        v["ns_per_step_max"].as_f64().unwrap(),
    );
    assert!(0.0 < min && min <= median && median <= max);
    let per_coordinate = v["ns_per_coordinate_step"].as_f64().unwrap();
    assert!((per_coordinate * 64.0 - median).abs() <= 1e-9 * median);
    assert_eq!(v["dim"], 64);
    assert_eq!(v["sampler"], "dula");
    assert_eq!(v["repeats"], 5);
    assert_eq!(v["warm_up"], 100);
    assert!(v["ess_per_second"].as_f64().unwrap() > 0.0);
    assert!(v["ess_per_core_second"].as_f64().unwrap() > 0.0);
}

#[test]
fn bench_times_the_kernel_sample_runs() {
    let scratch = Scratch::new("bench-kernel");
    scratch.ok("model ising-lattice --rows 6 --cols 6 --out lattice.json");
    scratch.ok("model binary-logistic --dim 10 --out logistic.json");
    let kernel = |model: &str, sampler: &str| {
        let out = scratch.ok(&format!(
            "bench --model {model} --sampler {sampler} --steps 200 --repeats 3 \
                 --ess-steps 100 --chains 1 --format json"
        ));
        let v: serde_json::Value = serde_json::from_str(&out).unwrap();
        assert_eq!(v["sampler"], sampler);
        v["kernel"].as_str().unwrap().to_owned()
    };
    assert_eq!(
        kernel("lattice.json", "dmala"),
        "dmala (tabulated lattice kernel)"
    );
    assert_eq!(
        kernel("lattice.json", "gibbs"),
        "gibbs (tabulated checkerboard sweep)"
    );
    assert_eq!(kernel("logistic.json", "gibbs"), "gibbs");
    assert_eq!(kernel("lattice.json", "dula"), "dula");
}
