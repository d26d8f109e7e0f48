//! The formula language of `metrics.toml`'s derived metrics: numbers, metric keys,
//! `+ - * /`, parentheses, and `ceil(x)`, `min(a, b)`, `max(a, b)`, `coalesce(a, b, …)`, and
//! `unless_above(a, b, x)`: `x`, absent where `a` is above `b` (a value that does not mean what
//! it says there; with `a` or `b` absent, `x` stands).

use std::fmt;

/// A parsed formula.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Formula {
    Num(f64),
    Var(String),
    Neg(Box<Formula>),
    Bin(Op, Box<Formula>, Box<Formula>),
    Call(Func, Vec<Formula>),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Op {
    Add,
    Sub,
    Mul,
    Div,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Func {
    Ceil,
    Min,
    Max,
    Coalesce,
    UnlessAbove,
}

/// A formula that does not parse: what was expected, at which byte column (1-based).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct FormulaError {
    pub column: usize,
    pub message: String,
}

impl fmt::Display for FormulaError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} at column {}", self.message, self.column)
    }
}

impl Formula {
    pub(crate) fn parse(text: &str) -> Result<Formula, FormulaError> {
        let mut p = Parser { s: text.as_bytes(), pos: 0 };
        let f = p.expr()?;
        p.skip_ws();
        if p.pos < p.s.len() {
            return Err(p.error("unexpected text"));
        }
        Ok(f)
    }

    /// Every metric key the formula reads.
    pub(crate) fn vars(&self) -> Vec<&str> {
        let mut out = Vec::new();
        self.collect(&mut out);
        out
    }

    fn collect<'a>(&'a self, out: &mut Vec<&'a str>) {
        match self {
            Formula::Num(_) => {}
            Formula::Var(v) => out.push(v),
            Formula::Neg(a) => a.collect(out),
            Formula::Bin(_, a, b) => {
                a.collect(out);
                b.collect(out);
            }
            Formula::Call(_, args) => args.iter().for_each(|a| a.collect(out)),
        }
    }
}

struct Parser<'a> {
    s: &'a [u8],
    pos: usize,
}

impl Parser<'_> {
    fn error(&self, message: &str) -> FormulaError {
        FormulaError { column: self.pos + 1, message: message.to_string() }
    }

    fn skip_ws(&mut self) {
        while self.pos < self.s.len() && self.s[self.pos].is_ascii_whitespace() {
            self.pos += 1;
        }
    }

    fn eat(&mut self, c: u8) -> bool {
        self.skip_ws();
        if self.s.get(self.pos) == Some(&c) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn expr(&mut self) -> Result<Formula, FormulaError> {
        let mut lhs = self.term()?;
        loop {
            let op = if self.eat(b'+') {
                Op::Add
            } else if self.eat(b'-') {
                Op::Sub
            } else {
                return Ok(lhs);
            };
            lhs = Formula::Bin(op, Box::new(lhs), Box::new(self.term()?));
        }
    }

    fn term(&mut self) -> Result<Formula, FormulaError> {
        let mut lhs = self.factor()?;
        loop {
            let op = if self.eat(b'*') {
                Op::Mul
            } else if self.eat(b'/') {
                Op::Div
            } else {
                return Ok(lhs);
            };
            lhs = Formula::Bin(op, Box::new(lhs), Box::new(self.factor()?));
        }
    }

    fn factor(&mut self) -> Result<Formula, FormulaError> {
        self.skip_ws();
        if self.eat(b'-') {
            return Ok(Formula::Neg(Box::new(self.factor()?)));
        }
        if self.eat(b'(') {
            let e = self.expr()?;
            if !self.eat(b')') {
                return Err(self.error("expected `)`"));
            }
            return Ok(e);
        }
        let start = self.pos;
        match self.s.get(self.pos) {
            Some(c) if c.is_ascii_digit() || *c == b'.' => {
                while self.pos < self.s.len() && (self.s[self.pos].is_ascii_digit() || self.s[self.pos] == b'.') {
                    self.pos += 1;
                }
                let text = std::str::from_utf8(&self.s[start..self.pos]).unwrap_or("");
                text.parse()
                    .map(Formula::Num)
                    .map_err(|_| FormulaError { column: start + 1, message: format!("bad number `{text}`") })
            }
            Some(c) if c.is_ascii_alphabetic() || *c == b'_' => {
                while self.pos < self.s.len() && (self.s[self.pos].is_ascii_alphanumeric() || self.s[self.pos] == b'_')
                {
                    self.pos += 1;
                }
                let name = std::str::from_utf8(&self.s[start..self.pos]).unwrap_or("").to_string();
                if !self.eat(b'(') {
                    return Ok(Formula::Var(name));
                }
                let func = match name.as_str() {
                    "ceil" => Func::Ceil,
                    "min" => Func::Min,
                    "max" => Func::Max,
                    "coalesce" => Func::Coalesce,
                    "unless_above" => Func::UnlessAbove,
                    _ => return Err(FormulaError { column: start + 1, message: format!("unknown function `{name}`") }),
                };
                let mut args = vec![self.expr()?];
                while self.eat(b',') {
                    args.push(self.expr()?);
                }
                if !self.eat(b')') {
                    return Err(self.error("expected `,` or `)`"));
                }
                let arity_ok = match func {
                    Func::Ceil => args.len() == 1,
                    Func::Min | Func::Max => args.len() == 2,
                    Func::Coalesce => !args.is_empty(),
                    Func::UnlessAbove => args.len() == 3,
                };
                if !arity_ok {
                    return Err(FormulaError {
                        column: start + 1,
                        message: format!("wrong number of arguments to `{name}`"),
                    });
                }
                Ok(Formula::Call(func, args))
            }
            _ => Err(self.error("expected a number, a metric or `(`")),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_precedence_and_calls() {
        let f = Formula::parse("a + b * 2 / coalesce(c, d)").unwrap();
        assert_eq!(f.vars(), ["a", "b", "c", "d"]);
        let Formula::Bin(Op::Add, _, rhs) = f else { panic!() };
        assert!(matches!(*rhs, Formula::Bin(Op::Div, _, _)));
    }

    #[test]
    fn errors_point_at_the_column() {
        assert_eq!(Formula::parse("a / (b + c").unwrap_err().column, 11);
        assert_eq!(Formula::parse("a $ b").unwrap_err().column, 3);
        assert!(Formula::parse("foo(a)").unwrap_err().message.contains("unknown function"));
        assert!(Formula::parse("min(a)").unwrap_err().message.contains("arguments"));
    }
}
