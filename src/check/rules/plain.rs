//! Plain words for a failing rule check: what the rule expected, derived
//! from the shape of its expression (`v.value == 0.0` → `0.0`,
//! `v.value >= 0.72 and v.value < 1.0` → `at least 0.72 and below 1.0`).
//! An expression of another shape has no plain form; the finding then
//! quotes the expression.

/// What `src` expects of `v.value`, in words; `None` when the expression
/// is not a comparison (or a conjunction of two) of `v.value` with a
/// literal.
pub fn expected(src: &str) -> Option<String> {
    let src = src.trim();
    if let Some((a, b)) = split_and(src) {
        return Some(format!("{} and {}", comparison(a)?, comparison(b)?));
    }
    comparison(src)
}

/// `a and b` with no other `and`, `or`, `if` or parenthesis.
fn split_and(src: &str) -> Option<(&str, &str)> {
    let (a, b) = src.split_once(" and ")?;
    let nested = |s: &str| {
        s.contains(" and ") || s.contains(" or ") || s.contains(" if ") || s.contains('(')
    };
    (!nested(a) && !nested(b)).then_some((a, b))
}

fn comparison(src: &str) -> Option<String> {
    let rest = src.trim().strip_prefix("v.value")?.trim_start();
    let ops: [(&str, &str); 7] = [
        ("==", ""),
        ("!=", "not "),
        (">=", "at least "),
        ("<=", "at most "),
        (">", "above "),
        ("<", "below "),
        ("in ", "one of "),
    ];
    for (op, words) in ops {
        if let Some(lit) = rest.strip_prefix(op) {
            let lit = lit.trim();
            if !is_literal(lit) {
                return None;
            }
            if op == "!=" && (lit == "''" || lit == "\"\"") {
                return Some("a non-empty value".to_string());
            }
            let lit = if op == "in " {
                lit.trim_start_matches('[')
                    .trim_end_matches(']')
                    .to_string()
            } else {
                lit.to_string()
            };
            return Some(format!("{words}{lit}"));
        }
    }
    None
}

/// A number, a quoted string or a list of them.
fn is_literal(s: &str) -> bool {
    if let Some(inner) = s.strip_prefix('[').and_then(|s| s.strip_suffix(']')) {
        return inner.split(',').all(|p| is_scalar(p.trim()));
    }
    is_scalar(s)
}

fn is_scalar(s: &str) -> bool {
    let quoted = |q: char| {
        s.len() >= 2 && s.starts_with(q) && s.ends_with(q) && !s[1..s.len() - 1].contains(q)
    };
    quoted('\'') || quoted('"') || s.parse::<f64>().is_ok() || s == "true" || s == "false"
}

#[cfg(test)]
mod tests {
    use super::expected;

    #[test]
    fn comparisons_read_as_words() {
        assert_eq!(expected("v.value == 0.0").as_deref(), Some("0.0"));
        assert_eq!(expected("v.value == 'adamw'").as_deref(), Some("'adamw'"));
        assert_eq!(
            expected("v.value >= 0.720 and v.value < 1.0").as_deref(),
            Some("at least 0.720 and below 1.0")
        );
        assert_eq!(
            expected("v.value in ['closed', 'open']").as_deref(),
            Some("one of 'closed', 'open'")
        );
        assert_eq!(
            expected("v.value != ''").as_deref(),
            Some("a non-empty value")
        );
        assert_eq!(expected("v.value > 0").as_deref(), Some("above 0"));
    }

    #[test]
    fn other_shapes_have_no_plain_form() {
        assert_eq!(expected("v.value.FID >= 0.0 and v.value.CLIP <= 1.0"), None);
        assert_eq!(expected("'FID' in v.value"), None);
        assert_eq!(expected("v.value == s.x"), None);
        assert_eq!(
            expected("v.value ~ '_common' if v.value in ['a'] else none"),
            None
        );
        assert_eq!(
            expected("v.value >= 1 and v.value < 2 and v.value != 3"),
            None
        );
    }
}
