//! The one-sided pooled two-sample t-test of the RCP check and the bisection
//! for the minimum acceptable mean (facts 3.2).

use statrs::distribution::{ContinuousCDF, StudentsT};

/// `scipy.stats.ttest_ind_from_stats(mean1, sd1, n1, mean2, sd2, n2,
/// equal_var=True)`: the t statistic and the two-sided p-value. `None` when
/// the degrees of freedom are not positive or t is not a number.
pub fn pooled_t_test(
    mean1: f64,
    sd1: f64,
    n1: f64,
    mean2: f64,
    sd2: f64,
    n2: f64,
) -> Option<(f64, f64)> {
    let df = n1 + n2 - 2.0;
    let svar = ((n1 - 1.0) * sd1 * sd1 + (n2 - 1.0) * sd2 * sd2) / df;
    let denom = (svar * (1.0 / n1 + 1.0 / n2)).sqrt();
    let t = (mean1 - mean2) / denom;
    if df.is_nan() || df <= 0.0 || t.is_nan() {
        return None;
    }
    let dist = StudentsT::new(0.0, 1.0, df).ok()?;
    let p = 2.0 * dist.sf(t.abs());
    Some((t, p.min(1.0)))
}

/// The official conversion of a two-sided p-value to one side
/// (`_find_p_value`): `p/2` when t < 0, else `1 - p/2`.
pub fn one_sided(t: f64, p_two_sided: f64) -> f64 {
    if t < 0.0 {
        p_two_sided / 2.0
    } else {
        1.0 - p_two_sided / 2.0
    }
}

/// `_find_min_acceptable_mean`: bisection on [0, mean] for the smallest
/// submission mean the one-sided test at `alpha` does not reject. The
/// official call passes the reference sample count as the first sample's
/// count; with equal standard deviations the order does not matter.
pub fn min_acceptable_mean(
    mean: f64,
    stdev: f64,
    n_ref: f64,
    n_subm: f64,
    alpha: f64,
    tolerance: f64,
) -> f64 {
    if stdev == 0.0 {
        return mean;
    }
    let mut mean_max = mean;
    let mut mean_min = 0.0;
    let mut mean_mid = (mean_min + mean_max) / 2.0;
    while mean_max - mean_min > tolerance {
        // A test that cannot be computed (df <= 0) counts as "not rejected",
        // like scipy's NaN p-value, which fails `p > alpha`.
        let p = pooled_t_test(mean_mid, stdev, n_ref, mean, stdev, n_subm)
            .map(|(t, p)| one_sided(t, p))
            .unwrap_or(f64::NAN);
        if p > alpha {
            mean_max = mean_mid;
        } else {
            mean_min = mean_mid;
        }
        mean_mid = (mean_min + mean_max) / 2.0;
    }
    mean_mid
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, rel: f64) -> bool {
        (a - b).abs() <= rel * b.abs().max(1e-300)
    }

    #[test]
    fn t_test_matches_scipy() {
        // /opt/mlperf-venv/bin/python -c "import scipy.stats as s; print(s.ttest_ind_from_stats(10.0,2.0,18,11.0,2.0,8,equal_var=True))"
        // statistic=-1.1766968108291043, pvalue=0.2508557757933551
        let (t, p) = pooled_t_test(10.0, 2.0, 18.0, 11.0, 2.0, 8.0).unwrap();
        assert!(close(t, -1.1766968108291043, 1e-12), "{t}");
        assert!(close(p, 0.2508557757933551, 1e-9), "{p}");
        assert!(close(one_sided(t, p), 0.2508557757933551 / 2.0, 1e-9));
        // ... s.ttest_ind_from_stats(12.0,1.5,6,11.0,2.5,1,equal_var=True)
        // statistic=0.6172133998483676, pvalue=0.5641135672330055
        let (t, p) = pooled_t_test(12.0, 1.5, 6.0, 11.0, 2.5, 1.0).unwrap();
        assert!(close(t, 0.6172133998483676, 1e-12), "{t}");
        assert!(close(p, 0.5641135672330055, 1e-9), "{p}");
        assert!(close(one_sided(t, p), 1.0 - 0.5641135672330055 / 2.0, 1e-9));
    }

    #[test]
    fn bisection_matches_official() {
        // /opt/mlperf-venv/bin/python -c "from mlperf_logging.rcp_checker.rcp_checker import RCP_Checker as C;
        //   c=C('training','6.0.0','llama31_8b',False); print(c._find_min_acceptable_mean(178858.66666666666, 5000.0, 18))"
        // 175223.74119663239
        let m = min_acceptable_mean(178858.66666666666, 5000.0, 18.0, 8.0, 0.05, 1e-4);
        assert!(close(m, 175223.74119663239, 1e-9), "{m}");
        // ... c._find_min_acceptable_mean(100.0, 3.0, 20) -> 97.85943031311035
        let m = min_acceptable_mean(100.0, 3.0, 20.0, 8.0, 0.05, 1e-4);
        assert!(close(m, 97.85943031311035, 1e-9), "{m}");
        // ... C('training','5.0.0','llama31_405b',False)._find_min_acceptable_mean(340000.0, 20000.0, 4)
        // 287377.19383789226 (N = 3, so the submission side has 1 sample)
        let m = min_acceptable_mean(340000.0, 20000.0, 4.0, 1.0, 0.05, 1e-4);
        assert!(close(m, 287377.19383789226, 1e-9), "{m}");
        assert_eq!(min_acceptable_mean(5.0, 0.0, 4.0, 1.0, 0.05, 1e-4), 5.0);
    }
}
