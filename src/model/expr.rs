//! The layout language of `coalprof model`: the user's own index expression, analysed with the
//! same per-instruction rules as the built-in patterns.
//!
//! # Grammar
//!
//! ```text
//! expr    := term (('+' | '-') term)*
//! term    := unary (('*' | '/' | '%') unary)*
//! unary   := '-' unary | primary
//! primary := INTEGER | IDENT | '(' expr ')'
//! ```
//!
//! Integers are 64-bit and signed; `/` and `%` are floor division and its remainder (the sign of
//! `%` follows the divisor). Whitespace is ignored. The expression is an *element* index; byte
//! address = index × element bytes, relative to a 256-byte aligned buffer.
//!
//! Identifiers are built-in variables or bound by the user as `name=value`:
//!
//! * `lane` (0..32, the 32 lanes of one warp instruction), `warp` (warp in the block, default
//!   range `0..1`), `tid` (`= warp * 32 + lane`, thread in the block), `block` (default `0..1`);
//! * `name=INTEGER-EXPR` — a named constant (`head_dim=128`); the value may use other names and
//!   built-ins (`t=tid`);
//! * `name=A..B` — a loop variable taking `A, A+1, …, B-1` (also sets the range of `warp` or
//!   `block`).
//!
//! One warp instruction is one assignment of every loop variable, `warp` and `block`; its lanes
//! take `lane = 0..32`. Each instruction is analysed like a global load (sectors, the ideal,
//! amplification) or, with `shared`, like a shared load (wavefronts, bank conflicts); the
//! result sums over all instructions.
//!
//! # Examples
//!
//! A paged KV cache, layout `[blocks, block_size, kv_heads, head_dim]`, thread `t` reads element `t`
//! of head_dim 128, fp32:
//!
//! ```text
//! coalprof model '((block * block_size + offset) * n_kv_heads + h) * head_dim + t' \
//!     block_size=16 n_kv_heads=8 head_dim=128 t=tid warp=0..4 block=0..4 offset=0..16 h=0..8 --bytes 4
//!   → 4 sectors/request (ideal 4); with --bytes 2: 2 (ideal 2)
//! coalprof model '((block * n_kv_heads + h) * head_dim + t) * block_size + offset' …same bindings…
//!   → 32 sectors/request (ideal 4): uncoalesced 8x (16x in fp16)
//! ```
//!
//! A shared tile `float t[32][32]` read down a column, and padded:
//!
//! ```text
//! coalprof model --shared 'lane * 32 + r' r=0..32   → 32 wavefronts/instruction (31 conflicts)
//! coalprof model --shared 'lane * 33 + r' r=0..32   → 1 wavefront/instruction
//! ```

use std::collections::{HashMap, HashSet};
use std::fmt;

use super::core::{footprint, ideal_wavefronts, shared_wavefronts, WarpAccess};
use super::Prediction;

/// A parse or evaluation error: what went wrong and the 1-based byte column in the text it
/// concerns (`context` names the binding when the text is a binding's value).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct ExprError {
    pub message: String,
    pub column: Option<usize>,
    pub context: Option<String>,
}

impl fmt::Display for ExprError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(c) = &self.context {
            write!(f, "{c}: ")?;
        }
        match self.column {
            Some(col) => write!(f, "{} at column {col}", self.message),
            None => f.write_str(&self.message),
        }
    }
}

impl std::error::Error for ExprError {}

fn err(message: impl Into<String>, pos: usize) -> ExprError {
    ExprError { message: message.into(), column: Some(pos + 1), context: None }
}

/// A parsed expression.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Expr {
    Num(i64),
    Var { name: String, pos: usize },
    Neg(Box<Expr>),
    Bin { op: char, lhs: Box<Expr>, rhs: Box<Expr>, pos: usize },
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Int(i64),
    Ident(String),
    Op(char),
    End,
}

fn lex(s: &str) -> Result<Vec<(Tok, usize)>, ExprError> {
    let b = s.as_bytes();
    let mut i = 0;
    let mut out = Vec::new();
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            i += 1;
        } else if c.is_ascii_digit() {
            let st = i;
            while i < b.len() && (b[i].is_ascii_digit() || b[i] == b'_') {
                i += 1;
            }
            let text: String = s[st..i].chars().filter(|&c| c != '_').collect();
            let v = text.parse::<i64>().map_err(|_| err(format!("integer `{}` is too large", &s[st..i]), st))?;
            out.push((Tok::Int(v), st));
        } else if c.is_ascii_alphabetic() || c == b'_' {
            let st = i;
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_') {
                i += 1;
            }
            out.push((Tok::Ident(s[st..i].to_string()), st));
        } else if b"+-*/%()".contains(&c) {
            out.push((Tok::Op(c as char), i));
            i += 1;
        } else {
            let ch = s[i..].chars().next().unwrap_or('?');
            return Err(err(format!("unexpected character `{ch}`"), i));
        }
    }
    out.push((Tok::End, s.len()));
    Ok(out)
}

struct Parser {
    toks: Vec<(Tok, usize)>,
    i: usize,
}

impl Parser {
    fn peek(&self) -> &(Tok, usize) {
        &self.toks[self.i]
    }

    fn describe(t: &Tok) -> String {
        match t {
            Tok::Int(v) => format!("`{v}`"),
            Tok::Ident(s) => format!("`{s}`"),
            Tok::Op(c) => format!("`{c}`"),
            Tok::End => "the end".into(),
        }
    }

    fn expr(&mut self) -> Result<Expr, ExprError> {
        let mut lhs = self.term()?;
        while let (Tok::Op(op @ ('+' | '-')), pos) = self.peek().clone() {
            self.i += 1;
            let rhs = self.term()?;
            lhs = Expr::Bin { op, lhs: Box::new(lhs), rhs: Box::new(rhs), pos };
        }
        Ok(lhs)
    }

    fn term(&mut self) -> Result<Expr, ExprError> {
        let mut lhs = self.unary()?;
        while let (Tok::Op(op @ ('*' | '/' | '%')), pos) = self.peek().clone() {
            self.i += 1;
            let rhs = self.unary()?;
            lhs = Expr::Bin { op, lhs: Box::new(lhs), rhs: Box::new(rhs), pos };
        }
        Ok(lhs)
    }

    fn unary(&mut self) -> Result<Expr, ExprError> {
        if let (Tok::Op('-'), _) = self.peek() {
            self.i += 1;
            return Ok(Expr::Neg(Box::new(self.unary()?)));
        }
        self.primary()
    }

    fn primary(&mut self) -> Result<Expr, ExprError> {
        let (t, pos) = self.peek().clone();
        self.i += 1;
        match t {
            Tok::Int(v) => Ok(Expr::Num(v)),
            Tok::Ident(name) => Ok(Expr::Var { name, pos }),
            Tok::Op('(') => {
                let e = self.expr()?;
                match self.peek().clone() {
                    (Tok::Op(')'), _) => {
                        self.i += 1;
                        Ok(e)
                    }
                    (t, p) => Err(err(format!("expected `)` but found {}", Self::describe(&t)), p)),
                }
            }
            t => Err(err(format!("expected a number, a name or `(` but found {}", Self::describe(&t)), pos)),
        }
    }
}

/// Parses one expression of the grammar in the module doc.
pub(crate) fn parse(s: &str) -> Result<Expr, ExprError> {
    let mut p = Parser { toks: lex(s)?, i: 0 };
    let e = p.expr()?;
    match p.peek() {
        (Tok::End, _) => Ok(e),
        (Tok::Op(')'), pos) => Err(err("unmatched `)`", *pos)),
        (t, pos) => Err(err(format!("expected an operator but found {}", Parser::describe(t)), *pos)),
    }
}

const BUILTINS: [&str; 4] = ["lane", "warp", "tid", "block"];

/// A layout: the index expression and its bindings, ready to enumerate.
#[derive(Debug, Clone)]
pub(crate) struct Layout {
    expr: Expr,
    /// Named values (constants or expressions of other names).
    named: HashMap<String, Expr>,
    /// Loop variables in binding order, with their ranges; `warp` and `block` always present.
    loops: Vec<(String, i64, i64)>,
}

impl Layout {
    /// Parses `expr` and `name=value` bindings (values: an expression, or a range `A..B`).
    pub(crate) fn new(expr: &str, bindings: &[(String, String)]) -> Result<Layout, ExprError> {
        let e = parse(expr)?;
        let mut named = HashMap::new();
        let mut loops: Vec<(String, i64, i64)> = Vec::new();
        let ctx = |name: &str, mut e: ExprError| {
            e.context = Some(format!("in `{name}=`"));
            e
        };
        for (name, value) in bindings {
            let name = name.trim();
            let ok_name = name.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
                && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
            if !ok_name {
                return Err(ExprError {
                    message: format!("`{name}` is not a variable name"),
                    column: None,
                    context: None,
                });
            }
            if name == "lane" || name == "tid" {
                return Err(ExprError {
                    message: format!(
                        "`{name}` is built in (lane is 0..32, tid = warp * 32 + lane); bind `warp` instead"
                    ),
                    column: None,
                    context: None,
                });
            }
            if named.contains_key(name) || loops.iter().any(|(n, ..)| n == name) {
                return Err(ExprError { message: format!("`{name}` is bound twice"), column: None, context: None });
            }
            if let Some((a, b)) = value.split_once("..") {
                let consts = HashMap::new();
                let lo = eval_const(&parse(a).map_err(|e| ctx(name, e))?, &consts).map_err(|e| ctx(name, e))?;
                let hi = eval_const(&parse(b).map_err(|e| ctx(name, e))?, &consts).map_err(|e| ctx(name, e))?;
                if hi <= lo {
                    return Err(ExprError {
                        message: format!("empty range {lo}..{hi}"),
                        column: None,
                        context: Some(format!("in `{name}=`")),
                    });
                }
                loops.push((name.to_string(), lo, hi));
            } else {
                named.insert(name.to_string(), parse(value).map_err(|e| ctx(name, e))?);
            }
        }
        for b in ["warp", "block"] {
            if !loops.iter().any(|(n, ..)| n == b) && !named.contains_key(b) {
                loops.push((b.to_string(), 0, 1));
            }
        }
        let layout = Layout { expr: e, named, loops };
        // Resolve every name once (unknown names and cycles are errors before enumerating).
        let mut env = Env::default();
        for (n, lo, _) in &layout.loops {
            env.vals.insert(n.clone(), *lo);
        }
        env.vals.insert("lane".into(), 0);
        layout.eval(&layout.expr, &mut env, 0)?;
        Ok(layout)
    }

    /// Warp instructions the layout enumerates.
    pub(crate) fn instructions(&self) -> u64 {
        self.loops.iter().map(|(_, lo, hi)| (hi - lo) as u64).product()
    }

    fn eval(&self, e: &Expr, env: &mut Env, depth: u32) -> Result<i64, ExprError> {
        match e {
            Expr::Num(v) => Ok(*v),
            Expr::Neg(x) => self.eval(x, env, depth)?.checked_neg().ok_or_else(|| err("overflow", 0)),
            Expr::Var { name, pos } => {
                if let Some(v) = env.vals.get(name) {
                    return Ok(*v);
                }
                if name == "tid" {
                    let w = env.vals.get("warp").copied().unwrap_or(0);
                    let l = env.vals.get("lane").copied().unwrap_or(0);
                    return Ok(w * 32 + l);
                }
                if let Some(x) = self.named.get(name) {
                    if depth > 64 {
                        return Err(err(format!("`{name}` is defined in terms of itself"), *pos));
                    }
                    return self.eval(x, env, depth + 1);
                }
                Err(err(
                    format!(
                        "unknown variable `{name}` (built-ins: {}; bind others as {name}=VALUE or {name}=A..B)",
                        BUILTINS.join(", ")
                    ),
                    *pos,
                ))
            }
            Expr::Bin { op, lhs, rhs, pos } => {
                let (a, b) = (self.eval(lhs, env, depth)?, self.eval(rhs, env, depth)?);
                binop(*op, a, b, *pos)
            }
        }
    }
}

#[derive(Default)]
struct Env {
    vals: HashMap<String, i64>,
}

fn binop(op: char, a: i64, b: i64, pos: usize) -> Result<i64, ExprError> {
    let r = match op {
        '+' => a.checked_add(b),
        '-' => a.checked_sub(b),
        '*' => a.checked_mul(b),
        '/' | '%' => {
            if b == 0 {
                return Err(err(format!("division by zero (`{a} {op} 0`)"), pos));
            }
            let q = a.checked_div(b).map(|q| if a % b != 0 && ((a < 0) != (b < 0)) { q - 1 } else { q });
            if op == '/' {
                q
            } else {
                q.and_then(|q| q.checked_mul(b)).and_then(|p| a.checked_sub(p))
            }
        }
        _ => unreachable!(),
    };
    r.ok_or_else(|| err(format!("overflow in `{a} {op} {b}`"), pos))
}

fn eval_const(e: &Expr, consts: &HashMap<String, Expr>) -> Result<i64, ExprError> {
    let l = Layout { expr: e.clone(), named: consts.clone(), loops: Vec::new() };
    l.eval(e, &mut Env::default(), 0)
}

/// Most warp instructions `analyze_layout` enumerates.
pub(crate) const MAX_INSTRUCTIONS: u64 = 1 << 22;

/// Analyses the layout `expr` with `bindings` (`("name", "value")` pairs, see the module doc)
/// for elements of `element_bytes` (1, 2, 4, 8 or 16) in global memory, or in shared memory
/// when `shared`.
///
/// Emits what ncu would count, under the raw keys of `metrics.toml`: global
/// `global_load_requests`, `…_instructions`, `…_sectors`, `…_bytes_requested`, and
/// `dram_bytes_read` (every distinct sector fetched once) with `algorithm_bytes_read` (every
/// distinct element once); shared `shared_load_instructions`, `…_wavefronts`,
/// `…_bank_conflicts`; and the launch fact `access_bytes`. The ratios are derived from these
/// by the frame module, with the same formulas as measured rows.
pub(crate) fn analyze_layout(
    expr: &str,
    bindings: &[(String, String)],
    element_bytes: u32,
    shared: bool,
) -> Result<Prediction, ExprError> {
    if ![1, 2, 4, 8, 16].contains(&element_bytes) {
        return Err(ExprError {
            message: format!("element size {element_bytes} B: use 1, 2, 4, 8 or 16"),
            column: None,
            context: None,
        });
    }
    let layout = Layout::new(expr, bindings)?;
    let n = layout.instructions();
    if n > MAX_INSTRUCTIONS {
        return Err(ExprError {
            message: format!("{n} warp instructions to enumerate (at most {MAX_INSTRUCTIONS}): narrow the ranges"),
            column: None,
            context: None,
        });
    }
    let mut env = Env::default();
    let mut idx = vec![0i64; layout.loops.len()];
    for (i, (_, lo, _)) in layout.loops.iter().enumerate() {
        idx[i] = *lo;
    }
    let eb = u64::from(element_bytes);
    let (mut sectors, mut wavefronts, mut ideal_wf) = (0u64, 0u64, 0u64);
    let mut all_sectors: HashSet<u64> = HashSet::new();
    let mut all_bytes: HashSet<u64> = HashSet::new();
    let mut collect_unique = true;
    for _ in 0..n {
        for (i, (name, ..)) in layout.loops.iter().enumerate() {
            env.vals.insert(name.clone(), idx[i]);
        }
        let mut addr = [0u64; 32];
        for l in 0..32 {
            env.vals.insert("lane".into(), l);
            let v = layout.eval(&layout.expr, &mut env, 0)?;
            if v < 0 {
                let vars: Vec<String> = layout.loops.iter().zip(&idx).map(|((n, ..), v)| format!("{n}={v}")).collect();
                return Err(ExprError {
                    message: format!("the index is negative ({v}) at lane={l} {}", vars.join(" ")),
                    column: None,
                    context: None,
                });
            }
            addr[l as usize] = (v as u64).checked_mul(eb).ok_or_else(|| err("address overflow", 0))?;
        }
        let w = WarpAccess { addr, mask: u32::MAX, bytes: element_bytes };
        if shared {
            wavefronts += shared_wavefronts(&w);
            ideal_wf += ideal_wavefronts(32, element_bytes);
        } else {
            sectors += footprint(&w).sectors;
            if collect_unique {
                for a in addr {
                    all_bytes.insert(a / eb);
                    for s in a / 32..=(a + eb - 1) / 32 {
                        all_sectors.insert(s);
                    }
                }
                collect_unique = all_sectors.len() < (1 << 24);
            }
        }
        // Next assignment: the last loop variable fastest.
        for i in (0..idx.len()).rev() {
            idx[i] += 1;
            if idx[i] < layout.loops[i].2 {
                break;
            }
            idx[i] = layout.loops[i].1;
        }
    }
    // Raw counters and launch facts only: `coalprof model` derives its metrics with the same
    // `metrics.toml` formulas as measured rows.
    let mut p = Prediction::default();
    let m = &mut p.metrics;
    let r = n as f64;
    m.insert("access_bytes".into(), f64::from(element_bytes));
    if shared {
        m.insert("shared_load_instructions".into(), r);
        m.insert("shared_load_wavefronts".into(), wavefronts as f64);
        m.insert("shared_load_bank_conflicts".into(), (wavefronts - ideal_wf) as f64);
        p.notes.push(
            "shared memory: 32 banks x 4 B; lanes reading one 32-bit word broadcast; 64/128-bit accesses in 2/4 phases"
                .into(),
        );
    } else {
        m.insert("global_load_requests".into(), r);
        m.insert("global_load_instructions".into(), r);
        m.insert("global_load_sectors".into(), sectors as f64);
        m.insert("global_load_bytes_requested".into(), (n * 32 * eb) as f64);
        if collect_unique {
            // A cold L2 fetching 32-byte sectors reads each distinct sector once; the algorithm
            // needs each distinct element once.
            m.insert("dram_bytes_read".into(), (all_sectors.len() as u64 * 32) as f64);
            m.insert("algorithm_bytes_read".into(), (all_bytes.len() as u64 * eb) as f64);
        } else {
            p.notes.push("too many distinct sectors to count dram_bytes_read".into());
        }
        p.notes.push("all 32 lanes active; the buffer is 256-byte aligned".into());
    }
    Ok(p)
}

/// Splits a `name=value` argument.
pub(crate) fn parse_binding(arg: &str) -> Result<(String, String), ExprError> {
    match arg.split_once('=') {
        Some((n, v)) if !n.trim().is_empty() && !v.trim().is_empty() => {
            Ok((n.trim().to_string(), v.trim().to_string()))
        }
        _ => Err(ExprError { message: format!("`{arg}` is not `name=value`"), column: None, context: None }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::tests::derived;

    fn b(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs.iter().map(|(a, b)| (a.to_string(), b.to_string())).collect()
    }

    fn eval(s: &str) -> i64 {
        eval_const(&parse(s).unwrap(), &HashMap::new()).unwrap()
    }

    #[test]
    fn arithmetic_precedence_and_floor_division() {
        assert_eq!(eval("1 + 2 * 3"), 7);
        assert_eq!(eval("(1 + 2) * 3"), 9);
        assert_eq!(eval("-7 / 2"), -4);
        assert_eq!(eval("-7 % 2"), 1);
        assert_eq!(eval("7 % -2"), -1);
        assert_eq!(eval("--3 - -3"), 6);
        assert_eq!(eval("100 / 7 % 3"), 2);
        assert_eq!(eval("1_024"), 1024);
    }

    #[test]
    fn errors_carry_the_column() {
        let e = parse("((block * 16 + o").unwrap_err();
        assert_eq!(e.column, Some(17));
        assert_eq!(e.to_string(), "expected `)` but found the end at column 17");
        assert_eq!(parse("a + * b").unwrap_err().column, Some(5));
        assert_eq!(parse("a $ b").unwrap_err().column, Some(3));
        assert_eq!(parse("a b").unwrap_err().column, Some(3));
        assert_eq!(parse("(a))").unwrap_err().to_string(), "unmatched `)` at column 4");
        let e = Layout::new("lane + x", &[]).unwrap_err();
        assert_eq!(e.column, Some(8));
        assert!(e.message.contains("unknown variable `x`"), "{e}");
        let e = Layout::new("lane", &b(&[("n", "3 +")])).unwrap_err();
        assert_eq!(e.to_string(), "in `n=`: expected a number, a name or `(` but found the end at column 4");
        assert!(Layout::new("lane / z", &b(&[("z", "0")])).is_err());
        assert!(Layout::new("a", &b(&[("a", "a + 1")])).is_err(), "cycle");
        assert!(analyze_layout("lane - 5", &[], 4, false).is_err(), "negative index");
    }

    #[test]
    fn shared_examples_from_the_doc() {
        let r = b(&[("r", "0..32")]);
        let a = derived(&analyze_layout("lane * 32 + r", &r, 4, true).unwrap());
        assert_eq!(a["shared_load_wavefronts_per_instruction"], 32.0);
        assert_eq!(a["shared_load_bank_conflicts"], 31.0 * 32.0);
        let a = derived(&analyze_layout("lane * 33 + r", &r, 4, true).unwrap());
        assert_eq!(a["shared_load_wavefronts_per_instruction"], 1.0);
        assert_eq!(a["shared_load_bank_conflicts"], 0.0);
        let a = derived(&analyze_layout("lane", &[], 8, true).unwrap());
        assert_eq!(a["shared_load_wavefronts_per_instruction"], 2.0);
        assert_eq!(a["shared_load_bank_conflicts"], 0.0);
    }

    #[test]
    fn tid_warp_and_block_builtins() {
        let a = derived(
            &analyze_layout("block * 256 + tid", &b(&[("warp", "0..8"), ("block", "0..3")]), 4, false).unwrap(),
        );
        assert_eq!(a["global_load_requests"], 24.0);
        assert_eq!(a["global_load_sectors_per_request"], 4.0);
        assert_eq!(a["global_load_sector_efficiency"], 1.0);
        let a = derived(&analyze_layout("tid * 2", &b(&[("warp", "0..4")]), 4, false).unwrap());
        assert_eq!(a["global_load_sectors_per_request"], 8.0);
        assert_eq!(a["global_load_sector_efficiency"], 0.5);
        assert_eq!(a["dram_amplification"], 2.0);
    }
}

#[cfg(test)]
mod proptests {
    use proptest::prelude::*;

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, failure_persistence: None, ..ProptestConfig::default() })]

        #[test]
        fn parse_never_panics(text in "[a-z0-9_ +*/%()\\-]{0,60}") {
            let _ = super::parse(&text);
        }

        /// Small well-formed expressions over lane and a loop variable evaluate or fail cleanly
        /// (division by zero, huge values), never panic.
        #[test]
        fn analyze_never_panics(a in -40i64..40, b in -40i64..40, op in "[+*/%-]", bytes in prop::sample::select(vec![1u32, 2, 4, 8, 16])) {
            let expr = format!("lane * {a} {op} r * {b}");
            let bindings = vec![("r".to_string(), "0..4".to_string())];
            let _ = super::analyze_layout(&expr, &bindings, bytes, false);
            let _ = super::analyze_layout(&expr, &bindings, bytes, true);
        }
    }
}
