//! Rule expressions: minijinja's sandboxed expression language, compiled
//! once when a pack loads, with the few functions rules need.
//!
//! In scope: `v` (the current event: `v.key`, `v.value`, `v.metadata`,
//! `v.time_ms`, `v.line`, `v.event_type`) and `s` (the pack's state).
//! Functions: `ceil`, `floor`, `abs`, `sqrt`, `log2`, `min`, `max`, `int`, `float`,
//! `is_integer`, `isclose`, `is_number`, `is_string`, `is_int`, `len`,
//! `sorted`. Evaluation is bounded by
//! fuel, so no rule can hang the tool, and the language has no file or
//! network access.

use minijinja::value::{Kwargs, Rest, Value, ValueKind};
use minijinja::{Environment, Error, ErrorKind, UndefinedBehavior};
use std::sync::OnceLock;

/// Names of the functions rules may call.
pub const FUNCTIONS: &[&str] = &[
    "ceil",
    "floor",
    "abs",
    "sqrt",
    "log2",
    "min",
    "max",
    "int",
    "float",
    "is_integer",
    "isclose",
    "is_number",
    "is_string",
    "is_int",
    "is_bool",
    "len",
    "sorted",
];

/// Fields of the event object `v`.
pub const EVENT_FIELDS: &[&str] = &["key", "value", "metadata", "time_ms", "line", "event_type"];

/// Upper bound on the work one evaluation may do.
const FUEL: u64 = 50_000;

/// Longest expression accepted. The longest shipped one is 169 bytes; the
/// bound keeps minijinja's parser and compiler, which recurse on some
/// shapes (`a if b else c if d else ...`), far from the end of a 2 MiB
/// thread stack.
pub const MAX_EXPR_BYTES: usize = 4096;

/// Most unary operators in a row (`not not ...`, `- - ...`): minijinja's
/// parser recurses on each without its nesting guard.
pub const MAX_UNARY_RUN: usize = 32;

/// Deepest nesting of brackets (`(`, `[`, `{`) and of `if ... else` chains
/// accepted. minijinja refuses deep nesting itself, but only after its
/// recursive-descent parser has used stack frames that a debug build makes
/// several times larger: a 1,000-deep expression overflows a 2 MiB test
/// thread before minijinja's guard is reached. The longest shipped
/// expression nests 3 deep.
pub const MAX_NESTING: usize = 32;

/// A compiled expression, with a shortcut for the shapes most rules use: a
/// constant (`true`, `9e99`), a path (`s.run_started`, `v.metadata.status`),
/// its negation (`not s.init_stopped`), or `min`/`max` of paths and
/// constants (`min(s.first_init_start, v.time_ms)`, run on every
/// `init_start`, half the records of a 5.0 log). A shortcut that meets anything
/// unusual (an undefined name) falls back to the full evaluation, so errors
/// are exactly minijinja's. Evaluating through minijinja's VM costs a few
/// thousand instructions; a shortcut a few dozen.
#[derive(Debug)]
pub struct Expr {
    inner: minijinja::Expression<'static, 'static>,
    fast: Fast,
    /// The source, to name the expression if it builds too big a value.
    src: Box<str>,
}

#[derive(Debug)]
enum Fast {
    None,
    Const(Value),
    Path {
        not: bool,
        parts: Vec<String>,
    },
    /// `min(...)` (`min: true`) or `max(...)` of constants and paths.
    Extreme {
        min: bool,
        args: Vec<Arg>,
    },
}

/// An argument of a [`Fast::Extreme`].
#[derive(Debug)]
enum Arg {
    Const(Value),
    Path(Vec<String>),
}

/// `ctx.a.b...`; `None` when a part is undefined (the full evaluation then
/// raises minijinja's own error). The engine's own objects (scope, event,
/// state) are read directly, through the functions their `get_value`
/// calls, without building a key value per step.
fn lookup(ctx: &Value, parts: &[String]) -> Option<Value> {
    use super::engine::{EventObj, Scope, StateObj};
    let mut cur = ctx.clone();
    for p in parts {
        let next = if let Some(o) = cur.downcast_object_ref::<Scope>() {
            o.name(p)
        } else if let Some(o) = cur.downcast_object_ref::<EventObj>() {
            o.field(p)
        } else if let Some(o) = cur.downcast_object_ref::<StateObj>() {
            o.var(p)
        } else {
            cur.get_attr(p).ok()
        };
        match next {
            Some(next) if !next.is_undefined() => cur = next,
            _ => return None,
        }
    }
    Some(cur)
}

impl Expr {
    /// Evaluates with `ctx` as the names in scope.
    pub fn eval(&self, ctx: Value) -> Result<Value, Error> {
        match &self.fast {
            Fast::Const(v) => return Ok(v.clone()),
            Fast::Path { not, parts } => {
                if let Some(cur) = lookup(&ctx, parts) {
                    return Ok(if *not {
                        Value::from(!cur.is_true())
                    } else {
                        cur
                    });
                }
            }
            Fast::Extreme { min, args } => {
                let values: Option<Vec<Value>> = args
                    .iter()
                    .map(|a| match a {
                        Arg::Const(v) => Some(v.clone()),
                        Arg::Path(parts) => lookup(&ctx, parts),
                    })
                    .collect();
                // An error is left to the full evaluation, which words it.
                if let Some(Ok(v)) = values.map(|vals| extreme(&vals, *min)) {
                    return Ok(v);
                }
            }
            Fast::None => {}
        }
        let _guard = super::watchdog::Guard::enter();
        let _budget = super::budget::Scope::enter(&self.src);
        self.inner.eval(ctx)
    }

    /// The expression as written.
    pub fn source(&self) -> &str {
        &self.src
    }

    /// The variables the expression reads (dotted paths).
    pub fn undeclared_variables(&self, nested: bool) -> std::collections::HashSet<String> {
        self.inner.undeclared_variables(nested)
    }
}

/// `[not] name(.name)*`, nothing else.
fn path_shape(src: &str) -> Option<(bool, Vec<String>)> {
    let (not, rest) = match src.strip_prefix("not ") {
        Some(r) => (true, r.trim()),
        None => (false, src),
    };
    let parts: Vec<String> = rest.split('.').map(str::to_string).collect();
    let ident = |p: &String| {
        let mut c = p.chars();
        c.next()
            .is_some_and(|f| f.is_ascii_alphabetic() || f == '_')
            && c.all(|ch| ch.is_ascii_alphanumeric() || ch == '_')
    };
    let reserved = |p: &String| {
        matches!(
            p.as_str(),
            "not"
                | "and"
                | "or"
                | "in"
                | "is"
                | "if"
                | "else"
                | "true"
                | "false"
                | "none"
                | "True"
                | "False"
                | "None"
        )
    };
    (parts.len() >= 2 && parts.iter().all(|p| ident(p) && !reserved(p))).then_some((not, parts))
}

/// `min(a, b, ...)` or `max(...)` whose arguments are each a path
/// (`s.x`, `v.time_ms`) or a literal without names, nothing else.
fn extreme_shape(src: &str) -> Option<(bool, Vec<Arg>)> {
    let (min, rest) = if let Some(r) = src.strip_prefix("min(") {
        (true, r)
    } else {
        (false, src.strip_prefix("max(")?)
    };
    let inner = rest.strip_suffix(')')?;
    // Nothing nested, no strings: a comma always separates arguments.
    if inner.contains(['(', ')', '[', ']', '{', '}', '"', '\'', '~']) {
        return None;
    }
    let mut args = Vec::new();
    for a in inner.split(',') {
        let a = a.trim();
        if let Some((false, parts)) = path_shape(a) {
            args.push(Arg::Path(parts));
            continue;
        }
        let e = env().compile_expression(a).ok()?;
        if !e.undeclared_variables(false).is_empty() {
            return None;
        }
        args.push(Arg::Const(e.eval(()).ok()?));
    }
    (!args.is_empty()).then_some((min, args))
}

fn env() -> &'static Environment<'static> {
    static ENV: OnceLock<Environment<'static>> = OnceLock::new();
    ENV.get_or_init(|| {
        let mut env = Environment::empty();
        env.set_undefined_behavior(UndefinedBehavior::Strict);
        env.set_fuel(Some(FUEL));
        env.add_function("ceil", |x: f64| whole(x.ceil()));
        env.add_function("floor", |x: f64| whole(x.floor()));
        env.add_function("abs", |x: Value| -> Result<Value, Error> {
            match x.kind() {
                ValueKind::Number => {
                    if let Some(i) = x.as_i64() {
                        if x.is_integer() {
                            return Ok(Value::from(i.unsigned_abs() as i128));
                        }
                    }
                    Ok(Value::from(number(&x)?.abs()))
                }
                _ => Err(type_error("abs", &x)),
            }
        });
        env.add_function("sqrt", |x: f64| x.sqrt());
        // Python's math.log2 raises on 0 and negative numbers (ResNet 1.0-4.0 weight decay).
        env.add_function("log2", |x: Value| -> Result<f64, Error> {
            let f = number(&x)?;
            if f > 0.0 {
                Ok(f.log2())
            } else {
                Err(type_error("log2", &x))
            }
        });
        env.add_function("min", |args: Rest<Value>| extreme(&args, true));
        env.add_function("max", |args: Rest<Value>| extreme(&args, false));
        env.add_function("int", |x: Value| -> Result<Value, Error> {
            if let Some(s) = x.as_str() {
                return s
                    .trim()
                    .parse::<i128>()
                    .map(Value::from)
                    .map_err(|_| type_error("int", &x));
            }
            let f = number(&x)?;
            if f.is_finite() {
                Ok(Value::from(f.trunc() as i128))
            } else {
                Err(type_error("int", &x))
            }
        });
        env.add_function("float", |x: Value| -> Result<f64, Error> {
            if let Some(s) = x.as_str() {
                return s.trim().parse::<f64>().map_err(|_| type_error("float", &x));
            }
            number(&x)
        });
        env.add_function("is_integer", |x: Value| -> Result<bool, Error> {
            let f = number(&x)?;
            Ok((f.round() - f).abs() < 1e-5)
        });
        env.add_function(
            "isclose",
            |a: Value, b: Value, kwargs: Kwargs| -> Result<bool, Error> {
                let rel: Option<f64> = kwargs.get("rel_tol")?;
                let abs: Option<f64> = kwargs.get("abs_tol")?;
                kwargs.assert_all_used()?;
                let (a, b) = (number(&a)?, number(&b)?);
                let rel = rel.unwrap_or(1e-9);
                let abs = abs.unwrap_or(0.0);
                Ok(a == b || (a - b).abs() <= f64::max(rel * f64::max(a.abs(), b.abs()), abs))
            },
        );
        env.add_function("is_number", |x: Value| x.kind() == ValueKind::Number);
        env.add_function("is_string", |x: Value| x.kind() == ValueKind::String);
        // Python's isinstance(x, int): a JSON number written without a
        // fraction or exponent (RNN-T data_train_num_buckets, 1.0-3.1), or a bool.
        env.add_function("is_int", |x: Value| {
            x.kind() == ValueKind::Bool || (x.kind() == ValueKind::Number && x.is_integer())
        });
        // Python's `type(x) == bool` (GNMT's *_alt_*_func keys, 0.6.0).
        env.add_function("is_bool", |x: Value| x.kind() == ValueKind::Bool);
        // Python's sorted() of a list (the weights_initialization tensor lists, 1.1-2.1).
        env.add_function("sorted", |x: Value| -> Result<Value, Error> {
            let mut items: Vec<Value> = x
                .try_iter()
                .map_err(|_| type_error("sorted", &x))?
                .collect();
            items.sort();
            Ok(Value::from(items))
        });
        // Python's len() of a string, list or object (Mask R-CNN decay steps).
        env.add_function("len", |x: Value| -> Result<usize, Error> {
            match x.kind() {
                ValueKind::String | ValueKind::Seq | ValueKind::Map => {
                    x.len().ok_or_else(|| type_error("len", &x))
                }
                _ => Err(type_error("len", &x)),
            }
        });
        env
    })
}

fn whole(x: f64) -> Value {
    if x.is_finite() && x.abs() < 9.0e15 {
        Value::from(x as i64)
    } else {
        Value::from(x)
    }
}

fn type_error(func: &str, x: &Value) -> Error {
    Error::new(
        ErrorKind::InvalidOperation,
        format!("{func}() needs a number, got {} {x}", x.kind()),
    )
}

/// A number as f64; booleans count as 0/1 as in Python. Anything else is a
/// type error, so a string where a number belongs fails the check.
pub fn number(x: &Value) -> Result<f64, Error> {
    match x.kind() {
        ValueKind::Number | ValueKind::Bool => f64::try_from(x.clone())
            .or_else(|_| i128::try_from(x.clone()).map(|i| i as f64))
            .map_err(|_| type_error("number", x)),
        _ => Err(type_error("number", x)),
    }
}

fn extreme(args: &[Value], want_min: bool) -> Result<Value, Error> {
    let items: Vec<Value> = if args.len() == 1 && args[0].kind() == ValueKind::Seq {
        args[0].try_iter()?.collect()
    } else {
        args.to_vec()
    };
    let mut best: Option<(f64, Value)> = None;
    for item in items {
        let f = number(&item)?;
        let better = match &best {
            None => true,
            Some((b, _)) => (want_min && f < *b) || (!want_min && f > *b),
        };
        if better {
            best = Some((f, item));
        }
    }
    best.map(|(_, v)| v)
        .ok_or_else(|| Error::new(ErrorKind::InvalidOperation, "min()/max() of an empty list"))
}

/// Why an expression did not compile.
#[derive(Debug, thiserror::Error)]
pub enum CompileError {
    #[error("syntax error in `{expr}`: {message}")]
    Syntax { expr: String, message: String },
    #[error("expression of {len} bytes is longer than the {max} bytes allowed: `{expr}`", max = MAX_EXPR_BYTES)]
    TooLong { expr: String, len: usize },
    #[error("more than {max} unary operators in a row, or brackets or `if ... else` nested more than {nest} deep, in `{expr}`", max = MAX_UNARY_RUN, nest = MAX_NESTING)]
    TooDeep { expr: String },
    #[error("unknown name `{name}` in `{expr}` (in scope: v, s and the functions {funcs})", funcs = FUNCTIONS.join(", "))]
    UnknownName { expr: String, name: String },
    #[error("unknown state variable `s.{name}` in `{expr}` (declare it under `state:`)")]
    UnknownState { expr: String, name: String },
    #[error("unknown event field `v.{name}` in `{expr}` (fields: {fields})", fields = EVENT_FIELDS.join(", "))]
    UnknownField { expr: String, name: String },
}

/// Compiles `source`, rejecting names that are not `v`, `s` or a function,
/// state variables not in `state_vars`, and unknown fields of `v`.
pub fn compile(source: &str, state_vars: &dyn Fn(&str) -> bool) -> Result<Expr, CompileError> {
    // minijinja may fold constants while compiling: bounded like an
    // evaluation.
    let _guard = super::watchdog::Guard::enter();
    let _budget = super::budget::Scope::enter(source.trim());
    let inner = compile_names(source, state_vars)?;
    let src = source.trim();
    let fast = if inner.undeclared_variables(false).is_empty() {
        // No names at all: the value never changes (there are no functions
        // without a name; fuel and the watchdog bound this one evaluation).
        match inner.eval(()) {
            Ok(v) => Fast::Const(v),
            Err(_) => Fast::None,
        }
    } else if let Some((not, parts)) = path_shape(src) {
        Fast::Path { not, parts }
    } else if let Some((min, args)) = extreme_shape(src) {
        Fast::Extreme { min, args }
    } else {
        Fast::None
    };
    Ok(Expr {
        inner,
        fast,
        src: src.into(),
    })
}

/// The start of an expression, for messages about huge ones.
fn head(src: &str) -> String {
    let mut out: String = src.chars().take(60).collect();
    if out.len() < src.len() {
        out.push('…');
    }
    out
}

/// The deepest nesting of brackets in `src`, counting each `if` outside
/// string literals as a level too (conditional chains recurse in the
/// parser); string literals are skipped.
fn nesting(src: &str) -> usize {
    let b = src.as_bytes();
    let (mut i, mut depth, mut ifs, mut best) = (0, 0usize, 0usize, 0usize);
    let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    while i < b.len() {
        let c = b[i];
        match c {
            b'(' | b'[' | b'{' => depth += 1,
            b')' | b']' | b'}' => depth = depth.saturating_sub(1),
            b'"' | b'\'' => {
                i += 1;
                while i < b.len() && b[i] != c {
                    i += if b[i] == b'\\' { 2 } else { 1 };
                }
            }
            _ if ident(c) => {
                let start = i;
                while i < b.len() && ident(b[i]) {
                    i += 1;
                }
                if &b[start..i] == b"if" {
                    ifs += 1;
                }
                best = best.max(depth + ifs);
                continue;
            }
            _ => {}
        }
        best = best.max(depth + ifs);
        i += 1;
    }
    best
}

/// Longest run of unary operators (`not`, `-`, `+`) outside strings.
fn unary_run(src: &str) -> usize {
    let b = src.as_bytes();
    let (mut i, mut run, mut best) = (0, 0usize, 0usize);
    let ident = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
        } else if c == b'-' || c == b'+' {
            run += 1;
            i += 1;
        } else if b[i..].starts_with(b"not") && !b.get(i + 3).is_some_and(|&n| ident(n)) {
            run += 1;
            i += 3;
        } else if c == b'"' || c == b'\'' {
            run = 0;
            i += 1;
            while i < b.len() && b[i] != c {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            i += 1;
        } else if ident(c) {
            run = 0;
            while i < b.len() && ident(b[i]) {
                i += 1;
            }
        } else {
            run = 0;
            i += 1;
        }
        best = best.max(run);
    }
    best
}

/// Where a `}` closes no `{` (outside string literals), if anywhere.
fn unmatched_close_brace(src: &str) -> Option<usize> {
    let mut depth = 0usize;
    let mut quote: Option<char> = None;
    let mut escaped = false;
    for (i, c) in src.char_indices() {
        if let Some(q) = quote {
            if escaped {
                escaped = false;
            } else if c == '\\' {
                escaped = true;
            } else if c == q {
                quote = None;
            }
            continue;
        }
        match c {
            '\'' | '"' => quote = Some(c),
            '{' => depth += 1,
            '}' if depth == 0 => return Some(i),
            '}' => depth -= 1,
            _ => {}
        }
    }
    None
}

fn compile_names(
    source: &str,
    state_vars: &dyn Fn(&str) -> bool,
) -> Result<minijinja::Expression<'static, 'static>, CompileError> {
    let src = source.trim();
    if src.len() > MAX_EXPR_BYTES {
        return Err(CompileError::TooLong {
            expr: head(src),
            len: src.len(),
        });
    }
    if unary_run(src) > MAX_UNARY_RUN || nesting(src) > MAX_NESTING {
        return Err(CompileError::TooDeep { expr: head(src) });
    }
    if let Some(at) = unmatched_close_brace(src) {
        // minijinja's lexer reads `}}` outside any `{` as the end of a
        // template variable and panics when more follows ("empty lexer
        // stack"): such a text is no expression anyway.
        return Err(CompileError::Syntax {
            expr: src.to_string(),
            message: format!("unmatched '}}' at byte {at}"),
        });
    }
    let expr = env()
        .compile_expression_owned(source.trim().to_string())
        .map_err(|e| CompileError::Syntax {
            expr: source.trim().to_string(),
            message: e.to_string(),
        })?;
    let mut names: Vec<String> = expr.undeclared_variables(true).into_iter().collect();
    names.sort();
    for name in names {
        let mut parts = name.splitn(3, '.');
        let root = parts.next().unwrap_or_default();
        let field = parts.next();
        match root {
            "v" => {
                if let Some(f) = field {
                    if !EVENT_FIELDS.contains(&f) {
                        return Err(CompileError::UnknownField {
                            expr: source.trim().to_string(),
                            name: f.to_string(),
                        });
                    }
                }
            }
            "s" => {
                if let Some(f) = field {
                    if !state_vars(f) {
                        return Err(CompileError::UnknownState {
                            expr: source.trim().to_string(),
                            name: f.to_string(),
                        });
                    }
                }
            }
            other if FUNCTIONS.contains(&other) => {}
            other => {
                return Err(CompileError::UnknownName {
                    expr: source.trim().to_string(),
                    name: other.to_string(),
                })
            }
        }
    }
    Ok(expr)
}

#[cfg(test)]
mod tests {
    /// A `}` that closes nothing is a syntax error, not a panic in
    /// minijinja's lexer (props.rs found `a}}` planted in a pack); braces
    /// of dict literals and inside strings are fine.
    #[test]
    fn unmatched_braces_are_syntax_errors() {
        for bad in ["a}} b", "x -}} y", "x +}} y", "s.n}}1", "a}}\n b", "a }"] {
            assert!(
                std::panic::catch_unwind(|| compile(bad, &|_| true).is_err()).unwrap_or(false),
                "{bad:?}"
            );
        }
        for good in [
            "{'a': {'b': 1}} + 1",
            "'}}' == 'a'",
            "{'a': {'b': 1}}['a']",
            "\"x}\" ~ 'y'",
        ] {
            assert!(compile(good, &|_| true).is_ok(), "{good:?}");
        }
    }

    use super::*;
    use minijinja::context;

    fn eval(src: &str, v: Value) -> Result<Value, Error> {
        let e = compile(src, &|_| true)
            .map_err(|e| Error::new(ErrorKind::SyntaxError, e.to_string()))?;
        e.eval(context! { v => v, s => Value::from(()) })
    }

    #[test]
    fn log2_len_and_is_int_behave_like_python() {
        let v = |x: serde_json::Value| Value::from_serialize(serde_json::json!({ "value": x }));
        assert_eq!(
            eval("log2(v.value)", v(serde_json::json!(8))).ok(),
            Some(Value::from(3.0))
        );
        assert!(eval("log2(v.value)", v(serde_json::json!(0))).is_err());
        assert_eq!(
            eval("is_int(v.value)", v(serde_json::json!(8))).ok(),
            Some(Value::from(true))
        );
        assert_eq!(
            eval("is_int(v.value)", v(serde_json::json!(8.0))).ok(),
            Some(Value::from(false))
        );
        assert_eq!(
            eval("len(v.value)", v(serde_json::json!([1, 2]))).ok(),
            Some(Value::from(2))
        );
        assert_eq!(
            eval("len(v.value)", v(serde_json::json!("abc"))).ok(),
            Some(Value::from(3))
        );
        assert!(eval("len(v.value)", v(serde_json::json!(8))).is_err());
        assert_eq!(
            eval(
                "sorted(v.value + ['a']) == sorted(['a', 'c', 'b'])",
                v(serde_json::json!(["c", "b"]))
            )
            .ok(),
            Some(Value::from(true))
        );
        assert!(eval("sorted(v.value)", v(serde_json::json!(8))).is_err());
    }

    #[test]
    fn functions_behave_like_python() {
        let v = Value::from_serialize(serde_json::json!({"value": 2.5}));
        assert_eq!(eval("ceil(v.value)", v.clone()).ok(), Some(Value::from(3)));
        assert_eq!(eval("floor(v.value)", v.clone()).ok(), Some(Value::from(2)));
        assert_eq!(
            eval("is_integer(v.value)", v.clone()).ok(),
            Some(Value::from(false))
        );
        assert_eq!(
            eval("is_integer(3.000001)", v.clone()).ok(),
            Some(Value::from(true))
        );
        assert_eq!(
            eval("max(1, v.value)", v.clone()).ok(),
            Some(Value::from(2.5))
        );
        assert_eq!(
            eval("isclose(1.0, 1.0 + 1e-12)", v.clone()).ok(),
            Some(Value::from(true))
        );
        assert_eq!(
            eval("v.value * 1152 == 2880.0", v).ok(),
            Some(Value::from(true))
        );
    }

    #[test]
    fn min_max_shortcut_agrees_with_the_full_evaluation() {
        let ctx = |v: serde_json::Value, s: serde_json::Value| {
            context! { v => Value::from_serialize(v), s => Value::from_serialize(s) }
        };
        let cases = [
            ("min(s.a, v.time_ms)", serde_json::json!({"a": 9e99})),
            ("min(s.a, v.time_ms)", serde_json::json!({"a": 3})),
            ("max(s.a, v.time_ms, 7)", serde_json::json!({"a": 3})),
            ("min(s.a, v.time_ms)", serde_json::json!({"a": "x"})),
            ("min(s.a, v.time_ms)", serde_json::json!({})),
            ("max(s.a)", serde_json::json!({"a": [4, 1.5, 9]})),
            ("max(s.a)", serde_json::json!({"a": []})),
            ("min(-1, 2.5)", serde_json::json!({})),
        ];
        for (src, state) in cases {
            let e = compile(src, &|_| true).unwrap_or_else(|e| panic!("{src}: {e}"));
            assert!(
                matches!(e.fast, Fast::Extreme { .. } | Fast::Const(_)),
                "{src}"
            );
            let c = ctx(serde_json::json!({"time_ms": 5.5}), state);
            let fast = e.eval(c.clone()).map_err(|e| e.to_string());
            let full = e.inner.eval(c).map_err(|e| e.to_string());
            assert_eq!(fast, full, "{src}");
        }
        for src in [
            "min(s.a, len(v.value))",
            "max('a', s.b)",
            "min(s.a ~ s.b, 1)",
        ] {
            let e = compile(src, &|_| true).unwrap_or_else(|e| panic!("{src}: {e}"));
            assert!(matches!(e.fast, Fast::None), "{src}");
        }
    }

    #[test]
    fn number_functions_reject_strings() {
        let v = Value::from_serialize(serde_json::json!({"value": "12"}));
        assert!(eval("is_integer(v.value)", v).is_err());
    }

    #[test]
    fn unknown_names_fail_at_compile_time() {
        assert!(matches!(
            compile("foo(v.value)", &|_| true),
            Err(CompileError::UnknownName { .. })
        ));
        assert!(matches!(
            compile("s.nope", &|n| n == "yes"),
            Err(CompileError::UnknownState { .. })
        ));
        assert!(matches!(
            compile("v.valeu == 1", &|_| true),
            Err(CompileError::UnknownField { .. })
        ));
        assert!(matches!(
            compile("v.value ==", &|_| true),
            Err(CompileError::Syntax { .. })
        ));
    }
}
