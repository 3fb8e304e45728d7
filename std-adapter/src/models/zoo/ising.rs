//! Ising models: the 2-D lattice and Barabási–Albert graphs.

use super::{ModelSpec, ZooError, at_least, finite, single};
use langevin_core::random::index;
use rand_core::{Rng, SeedableRng};
use rand_xoshiro::Xoshiro256PlusPlus;

/// A 2-D nearest-neighbour Ising model, written as kind `ising_lattice`:
/// `U(s) = J Σ_{⟨i,j⟩} s_i s_j + h Σ_i s_i` with `s = 2x − 1`.
///
/// The default is Sun et al. (2023)'s 20 × 20 periodic grid at the critical coupling.
///
/// # Examples
///
/// ```
/// use langevin_std::models::zoo::IsingLatticeSpec;
/// let spec = IsingLatticeSpec { rows: 4, cols: 5, ..Default::default() }.generate()?;
/// assert_eq!(spec.kind, "ising_lattice");
/// # Ok::<(), langevin_std::models::zoo::ZooError>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct IsingLatticeSpec {
    /// Rows (≥ 1).
    pub rows: usize,
    /// Columns (≥ 1).
    pub cols: usize,
    /// Coupling `J` of every bond.
    pub coupling: f64,
    /// Field `h` at every site.
    pub field: f64,
    /// Wrap rows and columns around.
    pub periodic: bool,
}

impl Default for IsingLatticeSpec {
    fn default() -> Self {
        Self {
            rows: 20,
            cols: 20,
            coupling: 0.4407,
            field: 0.0,
            periodic: true,
        }
    }
}

impl IsingLatticeSpec {
    /// The model file.
    ///
    /// # Errors
    ///
    /// [`ZooError`] for an empty or oversized lattice or a non-finite coupling or field.
    pub fn generate(&self) -> Result<ModelSpec, ZooError> {
        at_least("rows", self.rows, 1)?;
        at_least("cols", self.cols, 1)?;
        if self
            .rows
            .checked_mul(self.cols)
            .is_none_or(|n| u32::try_from(n).is_err())
        {
            return Err(ZooError::new("rows", "rows × cols exceeds 2^32 sites"));
        }
        finite("coupling", self.coupling, false)?;
        finite("field", self.field, false)?;
        single("coupling", self.coupling)?;
        single("field", self.field)?;
        Ok(ModelSpec::new("ising_lattice")
            .with("rows", self.rows)
            .with("cols", self.cols)
            .with("coupling", self.coupling)
            .with("field", self.field)
            .with("periodic", self.periodic))
    }
}

/// An Ising model on a Barabási–Albert graph, written as kind `ising` with an edge list
/// `[[i, j, J], ..]` (and a `field` vector when the field is not zero).
///
/// The default is Sun et al. (2023)'s graph: 400 nodes, 4 edges per new node.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BarabasiAlbertSpec {
    /// Nodes (> `edges_per_node`).
    pub nodes: usize,
    /// Edges each new node brings (≥ 1).
    pub edges_per_node: usize,
    /// Coupling `J` of every edge.
    pub coupling: f64,
    /// Field `h` at every node.
    pub field: f64,
    /// Seed of the graph.
    pub seed: u64,
}

impl Default for BarabasiAlbertSpec {
    fn default() -> Self {
        Self {
            nodes: 400,
            edges_per_node: 4,
            coupling: 0.4407,
            field: 0.0,
            seed: 0,
        }
    }
}

impl BarabasiAlbertSpec {
    /// The model file.
    ///
    /// # Errors
    ///
    /// [`ZooError`] unless `1 ≤ edges_per_node < nodes < 2^32` and the coupling and field are
    /// finite.
    pub fn generate(&self) -> Result<ModelSpec, ZooError> {
        at_least("edges_per_node", self.edges_per_node, 1)?;
        at_least("nodes", self.nodes, self.edges_per_node + 1)?;
        if u32::try_from(self.nodes).is_err() {
            return Err(ZooError::new("nodes", "must be below 2^32"));
        }
        finite("coupling", self.coupling, false)?;
        finite("field", self.field, false)?;
        let coupling = single("coupling", self.coupling)?;
        let field = single("field", self.field)?;
        let mut rng = Xoshiro256PlusPlus::seed_from_u64(self.seed);
        let edges = barabasi_albert_edges(self.nodes, self.edges_per_node, &mut rng);
        let data: Vec<f32> = edges
            .iter()
            .flat_map(|&(i, j)| [i as f32, j as f32, coupling])
            .collect();
        let mut spec = ModelSpec::new("ising").with("n", self.nodes).with_array(
            "edges",
            &[edges.len(), 3],
            data,
        );
        if field != 0.0 {
            spec = spec.with_array("field", &[self.nodes], vec![field; self.nodes]);
        }
        Ok(spec)
    }
}

/// The edges `(i, j)` with `i < j` of a Barabási–Albert graph by preferential attachment.
///
/// The graph starts as a star: node 0 joined to nodes `1..=m`. Each further node `v` then
/// joins `m` distinct earlier nodes, each chosen with probability proportional to its degree
/// (a uniform pick from the list of edge endpoints, repeated until `m` distinct nodes are
/// found). The result has `m (nodes − m)` edges, no self-loops and no repeated edges, listed
/// in the order they were added. Returns no edges unless `1 ≤ m < nodes`.
///
/// # Examples
///
/// ```
/// use rand_core::SeedableRng;
/// let mut rng = rand_xoshiro::Xoshiro256PlusPlus::seed_from_u64(1);
/// let edges = langevin_std::models::zoo::barabasi_albert_edges(50, 4, &mut rng);
/// assert_eq!(edges.len(), 4 * (50 - 4));
/// ```
pub fn barabasi_albert_edges<R: Rng + ?Sized>(
    nodes: usize,
    m: usize,
    rng: &mut R,
) -> Vec<(u32, u32)> {
    if m == 0 || m >= nodes {
        return Vec::new();
    }
    let mut edges = Vec::with_capacity(m * (nodes - m));
    // Every edge puts both its ends here, so a uniform pick is a degree-weighted pick.
    let mut endpoints: Vec<u32> = Vec::with_capacity(2 * m * (nodes - m));
    for j in 1..=m as u32 {
        edges.push((0, j));
        endpoints.extend([0, j]);
    }
    let mut chosen: Vec<u32> = Vec::with_capacity(m);
    for v in (m + 1) as u32..nodes as u32 {
        chosen.clear();
        while chosen.len() < m {
            let candidate = endpoints[index(rng, endpoints.len())];
            if !chosen.contains(&candidate) {
                chosen.push(candidate);
            }
        }
        for &u in &chosen {
            edges.push((u, v));
            endpoints.extend([u, v]);
        }
    }
    edges
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::models::zoo::{loaded, refused};
    use std::collections::HashSet;

    #[test]
    fn ba_graph_is_simple_connected_and_has_the_right_size() {
        for (n, m, seed) in [(400, 4, 1), (10, 1, 2), (6, 5, 3), (100, 3, 4)] {
            let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
            let edges = barabasi_albert_edges(n, m, &mut rng);
            assert_eq!(edges.len(), m * (n - m));
            let mut seen = HashSet::new();
            let mut degree = vec![0usize; n];
            for &(i, j) in &edges {
                assert!(i < j && (j as usize) < n);
                assert!(seen.insert((i, j)), "repeated edge {i}-{j}");
                degree[i as usize] += 1;
                degree[j as usize] += 1;
            }
            // The hub starts with m edges, its leaves with one, later nodes bring m each.
            for (v, &d) in degree.iter().enumerate() {
                let least = if v == 0 || v > m { m } else { 1 };
                assert!(d >= least, "node {v} has degree {d}");
            }
            // Connected: each edge (u, v) with u < v joins v to an earlier node.
            let mut has_earlier = vec![false; n];
            has_earlier[0] = true;
            for &(_, j) in &edges {
                has_earlier[j as usize] = true;
            }
            assert!(has_earlier.iter().all(|&b| b));
        }
    }

    #[test]
    fn ba_attachment_is_proportional_to_degree() {
        // With m = 1 and 4 nodes: node 2 joins 0 or 1 (½ each); node 3 then picks an edge end
        // uniformly, so P(3 ~ 0) = ½·½ + ½·¼ = 3/8, P(3 ~ 1) = 3/8, P(3 ~ 2) = ¼ (uniform
        // attachment would give ⅓ each). Counts over independent seeds are binomial; three
        // two-sided z-tests at a combined false-positive rate of 1e-6 need |z| < 5.1.
        let runs = 20_000u64;
        let mut counts = [0u64; 3];
        for seed in 0..runs {
            let mut rng = Xoshiro256PlusPlus::seed_from_u64(seed);
            let edges = barabasi_albert_edges(4, 1, &mut rng);
            assert_eq!(edges.len(), 3);
            counts[edges[2].0 as usize] += 1;
            assert_eq!(edges[2].1, 3);
        }
        for (count, p) in counts.iter().zip([3.0 / 8.0, 3.0 / 8.0, 0.25]) {
            let n = runs as f64;
            let z = (*count as f64 - n * p) / (n * p * (1.0 - p)).sqrt();
            assert!(z.abs() < 5.1, "counts {counts:?}, z = {z}");
        }
    }

    #[test]
    fn seeds_fix_the_graph() {
        let a = BarabasiAlbertSpec {
            seed: 5,
            ..Default::default()
        };
        assert_eq!(a.generate().unwrap(), a.generate().unwrap());
        let b = BarabasiAlbertSpec { seed: 6, ..a };
        assert_ne!(a.generate().unwrap(), b.generate().unwrap());
    }

    #[test]
    fn generated_files_load() {
        let ba = BarabasiAlbertSpec {
            nodes: 30,
            edges_per_node: 3,
            field: 0.1,
            ..Default::default()
        }
        .generate()
        .unwrap();
        let model = loaded(&ba);
        assert_eq!(model.dim(), 30);
        let lattice = IsingLatticeSpec {
            rows: 3,
            cols: 7,
            ..Default::default()
        }
        .generate()
        .unwrap();
        let model = loaded(&lattice);
        assert_eq!(model.dim(), 21);
    }

    #[test]
    fn bad_parameters_are_named() {
        assert_eq!(
            refused(
                BarabasiAlbertSpec {
                    nodes: 4,
                    ..Default::default()
                }
                .generate()
            ),
            "nodes"
        );
        assert_eq!(
            refused(
                IsingLatticeSpec {
                    coupling: f64::NAN,
                    ..Default::default()
                }
                .generate()
            ),
            "coupling"
        );
        assert_eq!(
            refused(
                IsingLatticeSpec {
                    rows: 0,
                    ..Default::default()
                }
                .generate()
            ),
            "rows"
        );
    }
}
