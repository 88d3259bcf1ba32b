//! Floating-point helpers with the exact semantics of the numpy and Python
//! operations the official tools use, so sums round the same way.

/// `np.sum` of a float64 array: numpy's pairwise summation (blocks of 8
/// partial sums, recursion above 128 elements).
pub fn np_sum(a: &[f64]) -> f64 {
    let n = a.len();
    if n < 8 {
        // numpy starts from -0.0 so that sum([-0.0]) is -0.0.
        let mut res = -0.0;
        for &x in a {
            res += x;
        }
        res
    } else if n <= 128 {
        let mut r = [0.0f64; 8];
        r.copy_from_slice(&a[..8]);
        let mut i = 8;
        while i < n - (n % 8) {
            for j in 0..8 {
                r[j] += a[i + j];
            }
            i += 8;
        }
        let mut res = ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]));
        while i < n {
            res += a[i];
            i += 1;
        }
        res
    } else {
        let mut n2 = n / 2;
        n2 -= n2 % 8;
        np_sum(&a[..n2]) + np_sum(&a[n2..])
    }
}

/// `np.mean`; NaN for an empty slice, as numpy gives.
pub fn np_mean(a: &[f64]) -> f64 {
    np_sum(a) / a.len() as f64
}

/// `np.std` (population, ddof = 0).
pub fn np_std(a: &[f64]) -> f64 {
    let m = np_mean(a);
    let dev: Vec<f64> = a.iter().map(|x| (x - m) * (x - m)).collect();
    (np_sum(&dev) / a.len() as f64).sqrt()
}

/// Python's built-in `sum` (left to right, starting at integer 0).
pub fn py_sum(a: &[f64]) -> f64 {
    a.iter().fold(0.0, |s, x| s + x)
}

/// `np.interp(x, [x0, x1], [y0, y1])` with `x0 < x1`.
pub fn np_interp(x: f64, x0: f64, x1: f64, y0: f64, y1: f64) -> f64 {
    if x.is_nan() {
        return x;
    }
    if x <= x0 {
        return y0;
    }
    if x >= x1 {
        return y1;
    }
    let slope = (y1 - y0) / (x1 - x0);
    let mut r = slope * (x - x0) + y0;
    if r.is_nan() {
        r = slope * (x - x1) + y1;
        if r.is_nan() && y0 == y1 {
            r = y0;
        }
    }
    r
}

/// Python's `round(x, ndigits)`: the decimal value nearest to the exact
/// binary value, ties to even.
pub fn py_round(x: f64, ndigits: i32) -> f64 {
    if !x.is_finite() || ndigits < 0 {
        return x;
    }
    let text = format!("{x:.prec$}", prec = ndigits as usize);
    text.parse().unwrap_or(x)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairwise_sum_matches_numpy_rounding() {
        // /opt/mlperf-venv/bin/python -c "import numpy as np; print(repr(np.sum(np.array([0.1]*10))))"
        // 1.0 (a sequential sum gives 0.9999999999999999)
        assert_eq!(np_sum(&[0.1; 10]), 1.0);
        assert_eq!(py_sum(&[0.1; 10]), 0.9999999999999999);
    }

    #[test]
    fn round_like_python() {
        // python3 -c "print(round(2.0005, 3), round(0.0625, 3), round(1.23456, 3))"
        // 2.001 0.062 1.235
        assert_eq!(py_round(2.0005, 3), 2.001);
        assert_eq!(py_round(0.0625, 3), 0.062);
        assert_eq!(py_round(1.23456, 3), 1.235);
    }

    #[test]
    fn interp_inside_and_at_ends() {
        assert_eq!(np_interp(1.5, 1.0, 2.0, 10.0, 20.0), 15.0);
        assert_eq!(np_interp(1.0, 1.0, 2.0, 10.0, 20.0), 10.0);
        assert_eq!(np_interp(2.0, 1.0, 2.0, 10.0, 20.0), 20.0);
    }
}
