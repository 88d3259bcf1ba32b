//! F-test of a submission's convergence variance against the RCP variance.

use statrs::distribution::{ContinuousCDF, FisherSnedecor};

/// Result of the variance-ratio test.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct FTest {
    /// `var_subm / var_ref`.
    pub f: f64,
    /// P(F <= f): small when the submission's spread is implausibly small.
    pub p_low: f64,
    /// P(F >= f): small when it is implausibly large.
    pub p_high: f64,
}

/// F-test of `var_subm` (from `n_subm` values) against `var_ref` (from
/// `n_ref` values), both unbiased variances. `None` without enough data.
pub fn f_test(var_subm: f64, n_subm: usize, var_ref: f64, n_ref: usize) -> Option<FTest> {
    if n_subm < 2 || n_ref < 2 || var_ref.is_nan() || var_ref <= 0.0 || !var_subm.is_finite() {
        return None;
    }
    let f = var_subm / var_ref;
    let dist = FisherSnedecor::new((n_subm - 1) as f64, (n_ref - 1) as f64).ok()?;
    Some(FTest {
        f,
        p_low: dist.cdf(f),
        p_high: dist.sf(f),
    })
}

/// Unbiased sample variance (ddof = 1); `None` below two values.
pub fn sample_variance(v: &[f64]) -> Option<f64> {
    if v.len() < 2 {
        return None;
    }
    let n = v.len() as f64;
    let mean = v.iter().sum::<f64>() / n;
    Some(v.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / (n - 1.0))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn f_test_matches_scipy() {
        // /opt/mlperf-venv/bin/python -c "import scipy.stats as s; print(s.f.cdf(0.1, 9, 19), s.f.sf(4.0, 9, 19))"
        // 0.0006450373482565798 0.005285020013546183
        let t = f_test(0.1, 10, 1.0, 20).unwrap();
        assert!((t.p_low - 0.0006450373482565798).abs() < 1e-12, "{t:?}");
        let t = f_test(4.0, 10, 1.0, 20).unwrap();
        assert!((t.p_high - 0.005285020013546183).abs() < 1e-12, "{t:?}");
        assert!(f_test(1.0, 1, 1.0, 20).is_none());
        assert!(f_test(1.0, 10, 0.0, 20).is_none());
    }

    #[test]
    fn variance_ddof1() {
        // python3 -c "import statistics; print(statistics.variance([1,2,3,4]))" -> 1.6666666666666667
        let v = sample_variance(&[1.0, 2.0, 3.0, 4.0]).unwrap();
        assert!((v - 1.6666666666666667).abs() < 1e-15);
    }
}
