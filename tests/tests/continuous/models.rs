//! The std-side continuous models, model files and the multi-chain driver.
#![allow(
    clippy::needless_range_loop,
    reason = "dense matrix code reads best with indices"
)]

use langevin_core::continuous::{
    GlmSumTarget, Langevin, LangevinSettings, SumPotential, SumTarget,
};
use langevin_std::continuous::{
    ContinuousConfig, ContinuousError, DataMatrix, GaussianMixture, GaussianSum,
    LogisticRegression, Model, RidgeRegression, SamplerKind, SnapshotKind, StorageKind, chain_rngs,
    run,
};

/// Central differences of the potential against the summed term gradients.
fn check_gradients<T: SumPotential>(t: &mut T, theta: &[f64]) {
    let d = t.dim();
    for i in 0..t.num_terms() {
        let mut g = vec![0.0; d];
        t.term_grad(i, theta, &mut g).unwrap();
        for k in 0..d {
            let e = 1e-5;
            let mut p = theta.to_vec();
            p[k] += e;
            let up = t.term_potential(i, &p).unwrap();
            p[k] -= 2.0 * e;
            let down = t.term_potential(i, &p).unwrap();
            let fd = (up - down) / (2.0 * e);
            assert!(
                (fd - g[k]).abs() < 1e-6 * (1.0 + g[k].abs()),
                "term {i}, coord {k}: {fd} vs {}",
                g[k]
            );
        }
    }
}

/// `add_term_grad(i, θ, c)` equals `c s_i z_i + c q(θ)`.
fn check_glm<T: GlmSumTarget>(t: &mut T, theta: &[f64]) {
    let d = t.dim();
    for i in 0..t.num_terms() {
        let c = 0.7;
        let mut a = vec![0.0; d];
        t.add_term_grad(i, theta, c, &mut a).unwrap();
        let mut b = vec![0.0; d];
        let s = t.term_scalar(i, theta).unwrap();
        t.add_term_data(i, c * s, &mut b);
        t.add_shared_grad(theta, c, &mut b).unwrap();
        for (x, y) in a.iter().zip(&b) {
            assert!((x - y).abs() < 1e-12 * (1.0 + x.abs()));
        }
    }
}

#[test]
fn model_gradients_match_potentials() {
    let theta = [0.3, -0.7, 1.1];
    check_gradients(&mut GaussianSum::synthetic(6, 3, 1).unwrap(), &theta);
    let (mut lr, _) = LogisticRegression::synthetic(8, 3, 2.0, 2).unwrap();
    check_gradients(&mut lr, &theta);
    check_glm(&mut lr, &theta);
    let (mut rr, _) = RidgeRegression::synthetic(8, 3, 0.5, 3.0, 3).unwrap();
    check_gradients(&mut rr, &theta);
    check_glm(&mut rr, &theta);
    let mut mx = GaussianMixture::synthetic(8, 3, 2.0, 4).unwrap();
    check_gradients(&mut mx, &theta);
    check_glm(&mut mx, &theta);
    // The mixture term is −ln(½ e^{−|θ−a|²/2} + ½ e^{−|θ+a|²/2}) times its weight.
    let a = mx.a().row(2).to_vec();
    let n2 = |s: f64| -> f64 { theta.iter().zip(&a).map(|(t, a)| (t - s * a).powi(2)).sum() };
    let direct = -(0.5 * (-n2(1.0) / 2.0).exp() + 0.5 * (-n2(-1.0) / 2.0).exp()).ln() * mx.weight();
    assert!((mx.term_potential(2, &theta).unwrap() - direct).abs() < 1e-12);
    assert_eq!(mx.weight(), 1.0 / 8.0);
}

#[test]
fn ridge_posterior_is_exact() {
    let (mut m, _) = RidgeRegression::synthetic(30, 3, 0.5, 2.0, 5).unwrap();
    let (mean, cov) = m.posterior().unwrap();
    // ∇V(mean) = 0 and Cov = (∇²V)⁻¹: check ∇V(mean + Σ e_k) = e_k.
    let mut g = vec![0.0; 3];
    m.add_full_grad(&mean, 1.0, &mut g).unwrap();
    assert!(g.iter().all(|v| v.abs() < 1e-9), "{g:?}");
    for k in 0..3 {
        let p: Vec<f64> = (0..3).map(|r| mean[r] + cov[r * 3 + k]).collect();
        let mut g = vec![0.0; 3];
        m.add_full_grad(&p, 1.0, &mut g).unwrap();
        for r in 0..3 {
            let e = if r == k { 1.0 } else { 0.0 };
            assert!((g[r] - e).abs() < 1e-9);
        }
    }
}

#[test]
fn logistic_labels() {
    let x = DataMatrix::new(3, 2, vec![1.0, 0.0, 0.0, 1.0, 1.0, 1.0]).unwrap();
    let a = LogisticRegression::new(x.clone(), &[0.0, 1.0, 1.0], 1.0).unwrap();
    let b = LogisticRegression::new(x.clone(), &[-1.0, 1.0, 1.0], 1.0).unwrap();
    assert_eq!(a, b);
    assert!(LogisticRegression::new(x.clone(), &[0.0, -1.0, 1.0], 1.0).is_err());
    assert!(LogisticRegression::new(x.clone(), &[0.0, 2.0, 1.0], 1.0).is_err());
    assert!(LogisticRegression::new(x.clone(), &[0.0, 1.0], 1.0).is_err());
    assert!(LogisticRegression::new(x, &[0.0, 1.0, 1.0], 0.0).is_err());
    assert!(DataMatrix::new(2, 2, vec![1.0, f64::NAN, 0.0, 0.0]).is_err());
    assert!(DataMatrix::new(0, 2, vec![]).is_err());
    assert!(DataMatrix::from_rows(&[vec![1.0], vec![1.0, 2.0]]).is_err());
}

/// A fresh folder, removed when dropped.
fn tmpdir(tag: &str) -> tempfile::TempDir {
    let prefix = format!("langevin-cont-{tag}-");
    tempfile::Builder::new().prefix(&prefix).tempdir().unwrap()
}

/// A minimal `.npy` writer for the test's own fixtures.
fn write_npy(path: &std::path::Path, descr: &str, shape: &str, data: &[u8]) {
    let mut header = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}");
    let unpadded = 10 + header.len() + 1;
    header.push_str(&" ".repeat((64 - unpadded % 64) % 64));
    header.push('\n');
    let mut out = b"\x93NUMPY\x01\x00".to_vec();
    out.extend_from_slice(&(header.len() as u16).to_le_bytes());
    out.extend_from_slice(header.as_bytes());
    out.extend_from_slice(data);
    std::fs::write(path, out).unwrap();
}

#[test]
fn model_files_of_every_kind() {
    let scratch = tmpdir("files");
    let dir = scratch.path();
    let x = [1.0f64, 0.5, -0.3, 2.0, 0.0, 1.0];
    write_npy(
        &dir.join("X.npy"),
        "<f8",
        "(3, 2)",
        &x.iter().flat_map(|v| v.to_le_bytes()).collect::<Vec<_>>(),
    );
    write_npy(
        &dir.join("y.npy"),
        "<i8",
        "(3,)",
        &[0i64, 1, 1]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect::<Vec<_>>(),
    );
    write_npy(
        &dir.join("X32.npy"),
        "<f4",
        "(3, 2)",
        &x.iter()
            .flat_map(|v| (*v as f32).to_le_bytes())
            .collect::<Vec<_>>(),
    );
    std::fs::write(dir.join("X.csv"), "a,b\n1,0.5\n-0.3,2\n0,1\n").unwrap();
    std::fs::write(dir.join("y.csv"), "0.5\n-1.5\n2\n").unwrap();
    let write = |name: &str, text: &str| {
        let p = dir.join(name);
        std::fs::write(&p, text).unwrap();
        p
    };
    let xm = DataMatrix::new(3, 2, x.to_vec()).unwrap();

    let m = Model::load(&write(
        "g.json",
        r#"{"kind":"gaussian_sum","centers":[[0,1],[2,3]]}"#,
    ))
    .unwrap();
    assert_eq!(
        m,
        Model::GaussianSum(GaussianSum::from_rows(&[vec![0.0, 1.0], vec![2.0, 3.0]]).unwrap())
    );
    let m = Model::load(&write(
        "l.json",
        r#"{"kind":"logistic_regression","X":"X.npy","y":"y.npy","prior_var":10}"#,
    ))
    .unwrap();
    assert_eq!(
        m,
        Model::Logistic(LogisticRegression::new(xm.clone(), &[0.0, 1.0, 1.0], 10.0).unwrap())
    );
    let m32 = Model::load(&write(
        "l32.json",
        r#"{"kind":"logistic_regression","X":"X32.npy","y":"y.npy","prior_var":10}"#,
    ))
    .unwrap();
    assert_eq!(m32.dim(), 2);
    let m = Model::load(&write(
        "r.json",
        r#"{"kind":"ridge_regression","X":"X.csv","y":"y.csv","noise_var":0.5,"prior_var":2}"#,
    ))
    .unwrap();
    assert_eq!(
        m,
        Model::Ridge(RidgeRegression::new(xm, &[0.5, -1.5, 2.0], 0.5, 2.0).unwrap())
    );
    assert!(m.is_glm());
    let m = Model::load(&write(
        "m.json",
        r#"{"kind":"gaussian_mixture","a":[[2,2],[1,3]]}"#,
    ))
    .unwrap();
    assert_eq!((m.dim(), m.num_terms()), (2, 2));
    // `X` and `y` may be inline arrays: the same model as from the files.
    let inline = Model::load(&write(
        "inline.json",
        r#"{"kind":"ridge_regression","X":[[1,0.5],[-0.3,2],[0,1]],"y":[0.5,-1.5,2],"noise_var":0.5,"prior_var":2}"#,
    ))
    .unwrap();
    let from_csv = Model::load(&dir.join("r.json")).unwrap();
    assert_eq!(inline, from_csv, "X.csv holds the same rows");

    // Unknown fields are refused, naming the file, the field, the fields of the kind and the
    // near miss.
    let e = Model::load(&write(
        "typo.json",
        r#"{"kind":"ridge_regression","X":"X.csv","y":"y.csv","nosie_var":0.5,"prior_var":2}"#,
    ))
    .unwrap_err()
    .to_string();
    for part in [
        "typo.json",
        "`nosie_var`",
        "did you mean `noise_var`",
        "`prior_var`",
    ] {
        assert!(e.contains(part), "{e:?} lacks {part:?}");
    }
    // Errors of the data name the model file.
    let e = Model::load(&write(
        "ragged.json",
        r#"{"kind":"ridge_regression","X":[[1,2],[3]],"y":[0,1],"noise_var":1,"prior_var":1}"#,
    ))
    .unwrap_err()
    .to_string();
    assert!(e.contains("ragged.json") && e.contains("row 1"), "{e}");

    // Errors name what is wrong.
    let bad = [
        r#"{"kind":"nope"}"#,
        r#"{"kind":"gaussian_sum","centers":[[0,1],[2]]}"#,
        r#"{"kind":"gaussian_sum","centers":[]}"#,
        r#"{"kind":"logistic_regression","X":"missing.npy","y":"y.npy","prior_var":1}"#,
        r#"{"kind":"ridge_regression","X":"X.csv","y":"y.csv","noise_var":-1,"prior_var":2}"#,
        r#"{"kind":"logistic_regression","X":"X.csv","y":"y.csv","prior_var":1}"#,
    ];
    for (k, text) in bad.iter().enumerate() {
        let e = Model::load(&write(&format!("bad{k}.json"), text)).unwrap_err();
        assert!(!e.to_string().is_empty());
    }
}

fn gauss_cfg(sampler: SamplerKind) -> ContinuousConfig {
    let mut cfg = ContinuousConfig::new(
        Model::GaussianSum(GaussianSum::synthetic(10, 2, 3).unwrap()),
        sampler,
        0.01,
    );
    cfg.passes = 4.0;
    cfg.chains = 5;
    cfg.seed = 42;
    cfg
}

#[test]
fn driver_runs_every_sampler_and_counts_passes() {
    for sampler in [
        SamplerKind::Lmc,
        SamplerKind::Sgld,
        SamplerKind::Sghmc,
        SamplerKind::Ewsg,
        SamplerKind::Agld,
    ] {
        let mut cfg = gauss_cfg(sampler);
        cfg.batch = 2;
        cfg.draws_per_pass = 2;
        cfg.burn_in_passes = 1.0;
        let out = run(&cfg).unwrap();
        assert_eq!(out.shape, [5, 8, 2]);
        let s = &out.summary;
        assert_eq!((s.dim, s.terms, s.chains, s.draws_per_chain), (2, 10, 5, 8));
        assert!(
            s.data_passes >= 5.0 && s.data_passes < 5.0 + 2.0,
            "{}",
            s.data_passes
        );
        assert!((s.grad_evals_per_draw - s.grad_evals as f64 / 40.0).abs() < 1e-9);
        assert!(s.mean.iter().chain(&s.var).all(|v| v.is_finite()));
        assert!(out.samples.iter().all(|v| v.is_finite()));
        let json = serde_json::to_value(s).unwrap();
        for key in [
            "sampler",
            "dim",
            "chains",
            "passes",
            "grad_evals",
            "grad_evals_per_draw",
            "data_passes",
            "wall_time_s",
            "ns_per_step",
            "mean",
            "var",
        ] {
            assert!(json.get(key).is_some(), "summary lacks {key}");
        }
    }
    // LMC: one step per pass, exactly N evaluations per draw.
    let out = run(&gauss_cfg(SamplerKind::Lmc)).unwrap();
    assert_eq!(out.summary.grad_evals_per_draw, 10.0);
    assert_eq!(out.summary.steps, 4 * 5);
}

#[test]
fn driver_is_reproducible_and_thread_independent() {
    let mut cfg = gauss_cfg(SamplerKind::Agld);
    cfg.snapshot = SnapshotKind::Partial;
    cfg.threads = 1;
    let a = run(&cfg).unwrap();
    cfg.threads = 3;
    let b = run(&cfg).unwrap();
    assert_eq!(a.samples, b.samples);
    cfg.seed = 43;
    assert_ne!(run(&cfg).unwrap().samples, a.samples);
}

#[test]
fn chain_c_uses_the_seed_advanced_by_c_jumps() {
    let mut cfg = gauss_cfg(SamplerKind::Sgld);
    cfg.batch = 3;
    let out = run(&cfg).unwrap();
    let rngs = chain_rngs(cfg.seed, 5);
    let Model::GaussianSum(model) = &cfg.model else {
        unreachable!()
    };
    for (c, mut rng) in rngs.into_iter().enumerate() {
        let mut m = model.clone();
        let settings = LangevinSettings::sgld(cfg.step, 3).unwrap();
        let mut w = vec![0.0; 6];
        let mut ch = Langevin::new(settings, 2, 10, &[0.0, 0.0], &mut w, &mut []).unwrap();
        let mut evals = 0u64;
        let mut k = 0;
        while k < 4 {
            evals += u64::from(ch.step(&mut m, &mut rng).unwrap().grad_evals);
            while k < 4 && evals >= (k as u64 + 1) * 10 {
                let want: Vec<f32> = ch.theta().iter().map(|&v| v as f32).collect();
                assert_eq!(out.draw(c, k), want.as_slice());
                k += 1;
            }
        }
    }
}

#[test]
fn driver_rejects_bad_options() {
    let mut cfg = gauss_cfg(SamplerKind::Sgld);
    cfg.batch = 0;
    assert!(matches!(run(&cfg), Err(ContinuousError::Build(_))));
    cfg.batch = 11;
    assert!(matches!(run(&cfg), Err(ContinuousError::Build(_))));
    let mut cfg = gauss_cfg(SamplerKind::Agld);
    cfg.storage = StorageKind::Scalar;
    assert!(matches!(run(&cfg), Err(ContinuousError::Config(_))));
    cfg.storage = StorageKind::Auto;
    cfg.period = Some(0);
    assert!(matches!(run(&cfg), Err(ContinuousError::Build(_))));
    let mut cfg = gauss_cfg(SamplerKind::Sghmc);
    cfg.friction = -1.0;
    assert!(matches!(run(&cfg), Err(ContinuousError::Build(_))));
    let mut cfg = gauss_cfg(SamplerKind::Lmc);
    cfg.step = f64::NAN;
    assert!(run(&cfg).is_err());
    cfg.step = 0.01;
    cfg.passes = 0.0;
    assert!(matches!(run(&cfg), Err(ContinuousError::Config(_))));
    cfg.passes = 1.0;
    cfg.chains = 0;
    assert!(matches!(run(&cfg), Err(ContinuousError::Config(_))));
    cfg.chains = 1;
    cfg.init = Some(vec![0.0; 3]);
    assert!(matches!(run(&cfg), Err(ContinuousError::Config(_))));
    assert!("svrg".parse::<SamplerKind>().is_err());
    assert_eq!("ewsg".parse::<SamplerKind>().unwrap(), SamplerKind::Ewsg);
}

#[test]
fn samples_and_summary_files() {
    let scratch = tmpdir("out");
    let dir = scratch.path();
    let mut cfg = gauss_cfg(SamplerKind::Agld);
    cfg.snapshot = SnapshotKind::Mixed;
    let out = run(&cfg).unwrap();
    assert_eq!(out.summary.variant, "TMU-RA");
    out.write_samples(&dir.join("s.npy")).unwrap();
    out.write_summary(&dir.join("s.json")).unwrap();
    let bytes = std::fs::read(dir.join("s.npy")).unwrap();
    assert_eq!(&bytes[..6], b"\x93NUMPY");
    let hlen = u16::from_le_bytes([bytes[8], bytes[9]]) as usize;
    let header = std::str::from_utf8(&bytes[10..10 + hlen]).unwrap();
    assert!(
        header.contains("'<f4'") && header.contains("(5, 4, 2)"),
        "{header}"
    );
    assert_eq!((10 + hlen) % 64, 0);
    let data = &bytes[10 + hlen..];
    assert_eq!(data.len(), 4 * out.samples.len());
    assert_eq!(
        f32::from_le_bytes(data[..4].try_into().unwrap()),
        out.samples[0]
    );
    let summary: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("s.json")).unwrap()).unwrap();
    assert_eq!(summary["sampler"], "agld");
}

#[test]
fn glm_models_run_with_scalar_and_dense_snapshots() {
    let (m, _) = LogisticRegression::synthetic(50, 3, 10.0, 7).unwrap();
    for storage in [StorageKind::Auto, StorageKind::Dense, StorageKind::Scalar] {
        for snapshot in [
            SnapshotKind::Total,
            SnapshotKind::Partial,
            SnapshotKind::Mixed,
        ] {
            let mut cfg =
                ContinuousConfig::new(Model::Logistic(m.clone()), SamplerKind::Agld, 0.01);
            cfg.storage = storage;
            cfg.snapshot = snapshot;
            cfg.batch = 5;
            cfg.passes = 3.0;
            cfg.chains = 2;
            let out = run(&cfg).unwrap();
            assert!(out.samples.iter().all(|v| v.is_finite()));
        }
    }
}
