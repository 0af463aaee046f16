//! Seeded pseudo-random numbers (splitmix64): request-kind picks and Poisson gaps, reproducible per seed.

pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Rng {
        Rng(seed ^ 0x5851_f42d_4c95_7f2d)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// Uniform in [0, 1).
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Exponentially distributed gap with the given mean (Poisson arrivals).
    pub fn exp(&mut self, mean: f64) -> f64 {
        -(1.0 - self.next_f64()).ln() * mean
    }
}

/// Picks request kinds in proportion to their weights.
pub struct KindPicker {
    cumulative: Vec<f64>,
}

impl KindPicker {
    pub fn new(weights: &[f64]) -> KindPicker {
        let mut acc = 0.0;
        let cumulative = weights
            .iter()
            .map(|w| {
                acc += w;
                acc
            })
            .collect();
        KindPicker { cumulative }
    }

    pub fn pick(&self, rng: &mut Rng) -> u16 {
        if self.cumulative.len() == 1 {
            return 0;
        }
        let total = *self.cumulative.last().expect("non-empty");
        let x = rng.next_f64() * total;
        let i = self.cumulative.partition_point(|&c| c <= x);
        // A zero-weight kind never wins: skip to the next kind that has weight.
        i.min(self.cumulative.len() - 1) as u16
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn picks_in_proportion_and_never_zero_weight() {
        let p = KindPicker::new(&[3.0, 0.0, 1.0]);
        let mut rng = Rng::new(7);
        let mut n = [0u32; 3];
        for _ in 0..40_000 {
            n[p.pick(&mut rng) as usize] += 1;
        }
        assert_eq!(n[1], 0);
        let share = n[0] as f64 / 40_000.0;
        assert!((share - 0.75).abs() < 0.02, "share {share}");
    }

    #[test]
    fn exp_mean() {
        let mut rng = Rng::new(1);
        let mean = (0..100_000).map(|_| rng.exp(2.0)).sum::<f64>() / 100_000.0;
        assert!((mean - 2.0).abs() < 0.05, "mean {mean}");
    }
}
