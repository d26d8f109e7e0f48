//! ncu's unit strings → base units. Prefixes are decimal (ncu shows 32,768 bytes as
//! `Kbyte 32.77`), and two vocabularies coexist: `nsecond`/`cycle/second` (≤ 2023.2) and
//! `ns`/`hz` (2023+). Every value leaves the parser in the base unit named here.

/// A value's unit after normalisation: the base unit and the power of ten that got it there.
/// A power rather than a factor, so that `7520 nsecond` becomes exactly `7.52e-6 second`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Scale {
    /// The base unit.
    pub base: &'static str,
    /// The power of ten that converted the value to it.
    pub pow10: i32,
}

impl Scale {
    /// `value` in the base unit.
    pub fn apply(self, value: f64) -> f64 {
        let p = 10f64.powi(self.pow10.abs());
        if self.pow10 >= 0 {
            value * p
        } else {
            value / p
        }
    }
}

/// Normalise one unit string. Unknown units pass through unscaled (`base` is then the
/// canonical spelling of a known dimensionless count, or `"other"`), never an error: ncu adds
/// units faster than any table, and a count like `warp/cycle` needs no scaling.
pub fn scale(unit: &str) -> Scale {
    let u = unit.trim();
    if u.is_empty() {
        return Scale { base: "", pow10: 0 };
    }
    // Rates: "<size>/<time>" such as `Gbyte/s`, `byte/second`, `Mbyte/usecond`.
    if let Some((num, den)) = u.split_once('/') {
        if let (Some(n), Some(d)) = (size(num), time(den)) {
            return Scale { base: "byte/second", pow10: n - d };
        }
        if let (Some(n), "block") = (size(num), den) {
            return Scale { base: "byte/block", pow10: n };
        }
        if num == "cycle" {
            if let Some(d) = time(den) {
                return Scale { base: "hz", pow10: -d };
            }
        }
    }
    if let Some(f) = size(u) {
        return Scale { base: "byte", pow10: f };
    }
    if let Some(f) = time(u) {
        return Scale { base: "second", pow10: f };
    }
    if let Some(f) = frequency(u) {
        return Scale { base: "hz", pow10: f };
    }
    Scale { base: known_count(u), pow10: 0 }
}

/// Decimal size prefixes on `byte`.
fn size(u: &str) -> Option<i32> {
    let f = match u {
        "byte" => 0,
        "Kbyte" | "kbyte" | "KB" => 3,
        "Mbyte" | "MB" => 6,
        "Gbyte" | "GB" => 9,
        "Tbyte" | "TB" => 12,
        _ => return None,
    };
    Some(f)
}

/// Times, in seconds.
fn time(u: &str) -> Option<i32> {
    let f = match u {
        "second" | "s" | "sec" => 0,
        "msecond" | "ms" => -3,
        "usecond" | "us" => -6,
        "nsecond" | "ns" => -9,
        _ => return None,
    };
    Some(f)
}

fn frequency(u: &str) -> Option<i32> {
    let f = match u.to_ascii_lowercase().as_str() {
        "hz" => 0,
        "khz" => 3,
        "mhz" => 6,
        "ghz" => 9,
        _ => return None,
    };
    Some(f)
}

fn known_count(u: &str) -> &'static str {
    const COUNTS: &[&str] = &[
        "sector",
        "request",
        "inst",
        "warp",
        "block",
        "thread",
        "cycle",
        "register/thread",
        "SM",
        "cluster",
        "sector/request",
        "inst/cycle",
        "warp/cycle",
        "%",
        "byte/block",
    ];
    COUNTS.iter().find(|c| **c == u).copied().unwrap_or("other")
}

/// Parse one ncu number: thousands separators (`1,234`), `x.00`, `nan`, `n/a`, `(!) n/a`.
/// Returns `None` for anything that is not a finite number (the caller keeps the text).
pub fn number(text: &str) -> Option<f64> {
    let t = text.trim();
    if t.is_empty() {
        return None;
    }
    let t = t.strip_prefix("(!)").map(str::trim).unwrap_or(t);
    if t.is_empty() {
        return None; // a bare "(!)": nothing after ncu's warning mark
    }
    // Counts print with thousands separators, on most rows of a raw page: the digits are
    // gathered on the stack, not in a new string per value.
    let mut stack = [0u8; 64];
    let t = if t.contains(',') {
        // Only a well-formed thousands grouping counts: "1,234,567.5" yes, "1,2" or "a,b" no.
        let (int, frac) = t.split_once('.').unwrap_or((t, ""));
        let mut groups = int.trim_start_matches('-').split(',');
        let first = groups.next().unwrap_or_default();
        let well_formed = first.len() <= 3 && !first.is_empty() && groups.all(|g| g.len() == 3);
        if !well_formed {
            return None;
        }
        let mut n = 0;
        let frac = if frac.is_empty() { None } else { Some(frac) };
        let parts = int.split(',').chain(frac.map(|_| ".")).chain(frac);
        for part in parts {
            let Some(dst) = stack.get_mut(n..n + part.len()) else {
                // Longer than any f64 needs: the slow way.
                let cleaned =
                    if let Some(f) = frac { format!("{}.{f}", int.replace(',', "")) } else { int.replace(',', "") };
                return finite(&cleaned);
            };
            dst.copy_from_slice(part.as_bytes());
            n += part.len();
        }
        std::str::from_utf8(&stack[..n]).ok()?
    } else {
        t
    };
    finite(t)
}

/// `t` as a finite f64, if it starts like a number.
fn finite(t: &str) -> Option<f64> {
    let first = *t.as_bytes().first()?;
    if !(first.is_ascii_digit() || first == b'-' || first == b'+' || first == b'.') {
        return None; // rejects "nan", "inf", "n/a" before f64's parser accepts the first two
    }
    if let Some(v) = short_decimal(t) {
        return Some(v);
    }
    t.parse::<f64>().ok().filter(|v| v.is_finite())
}

/// `[-]digits[.digits]` of at most 15 digits, the form of nearly every value ncu prints, without
/// the general parser: the digits as one integer n and the fraction's length k give n / 10^k,
/// both exact in an f64 (below 2^53), so the one division rounds the exact decimal value
/// correctly: the same f64 `str::parse` returns (a proptest holds them equal).
fn short_decimal(t: &str) -> Option<f64> {
    let (negative, digits) = match t.as_bytes() {
        [b'-', rest @ ..] => (true, rest),
        b => (false, b),
    };
    let (mut n, mut count, mut frac, mut dot) = (0u64, 0u32, 0u32, false);
    for &b in digits {
        match b {
            b'0'..=b'9' => {
                n = n * 10 + u64::from(b - b'0');
                count += 1;
                frac += u32::from(dot);
            }
            b'.' if !dot => dot = true,
            _ => return None,
        }
        if count > 15 {
            return None;
        }
    }
    if count == 0 {
        return None;
    }
    const POW10: [f64; 16] = [1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15];
    let v = n as f64 / POW10[frac as usize];
    Some(if negative { -v } else { v })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimal_prefixes_and_both_time_vocabularies() {
        assert_eq!(scale("Kbyte"), Scale { base: "byte", pow10: 3 });
        assert_eq!(scale("usecond").pow10, -6);
        assert_eq!(scale("us").apply(7.5), 7.5e-6);
        assert_eq!(scale("nsecond").base, "second");
        assert_eq!(scale("Gbyte/s"), Scale { base: "byte/second", pow10: 9 });
        assert_eq!(scale("Mbyte/usecond").pow10, 12);
        assert_eq!(scale("cycle/nsecond"), Scale { base: "hz", pow10: 9 });
        assert_eq!(scale("Ghz"), Scale { base: "hz", pow10: 9 });
        assert_eq!(scale("Kbyte/block"), Scale { base: "byte/block", pow10: 3 });
        assert_eq!(scale(""), Scale { base: "", pow10: 0 });
        assert_eq!(scale("sector").base, "sector");
        assert_eq!(scale("furlong").base, "other");
    }

    #[test]
    fn numbers_with_separators_and_invalid_tokens() {
        assert_eq!(number("1,759,000.00"), Some(1_759_000.0));
        assert_eq!(number("\"32,768\"".trim_matches('"')), Some(32768.0));
        assert_eq!(number("46.47"), Some(46.47));
        assert_eq!(number("-3"), Some(-3.0));
        assert_eq!(number("nan"), None);
        assert_eq!(number("(!) nan"), None);
        assert_eq!(number("(!) n/a"), None);
        assert_eq!(number("n/a"), None);
        assert_eq!(number("inf"), None);
        assert_eq!(number("1,2"), None);
        assert_eq!(number("CachePreferNone"), None);
        assert_eq!(number(""), None);
        assert_eq!(number("(!)"), None);
        assert_eq!(number("(!)  "), None);
    }
}

#[cfg(test)]
mod proptests {
    use super::*;
    use proptest::prelude::*;

    /// `n` with a comma every three digits, as ncu prints counts (`1,759,000`).
    fn grouped(n: u64) -> String {
        let digits = n.to_string();
        let mut out = String::new();
        for (i, c) in digits.chars().enumerate() {
            if i > 0 && (digits.len() - i) % 3 == 0 {
                out.push(',');
            }
            out.push(c);
        }
        out
    }

    fn close(a: f64, b: f64) -> bool {
        (a - b).abs() <= 1e-12 * a.abs().max(b.abs()).max(1e-300)
    }

    const PREFIXED: &[(&str, &str)] = &[
        ("Kbyte", "byte"),
        ("Mbyte", "byte"),
        ("Gbyte", "byte"),
        ("Tbyte", "byte"),
        ("msecond", "second"),
        ("usecond", "second"),
        ("nsecond", "second"),
        ("ms", "s"),
        ("us", "s"),
        ("ns", "s"),
        ("Khz", "hz"),
        ("Mhz", "hz"),
        ("Ghz", "hz"),
        ("Kbyte/s", "byte/s"),
        ("Gbyte/second", "byte/second"),
        ("Mbyte/usecond", "byte/second"),
        ("Kbyte/block", "byte/block"),
        ("cycle/nsecond", "cycle/second"),
    ];

    proptest! {
        #![proptest_config(ProptestConfig { cases: 256, failure_persistence: None, ..ProptestConfig::default() })]

        /// The short path gives `str::parse`'s f64, bit for bit, on every form it accepts.
        #[test]
        fn short_decimals_parse_as_the_standard_parser_does(
            negative in any::<bool>(), int in "[0-9]{0,16}", frac in proptest::option::of("[0-9]{0,16}"),
        ) {
            let t = format!("{}{int}{}", if negative { "-" } else { "" }, frac.map(|f| format!(".{f}")).unwrap_or_default());
            if let Some(v) = short_decimal(&t) {
                let want: f64 = t.parse().unwrap();
                prop_assert_eq!(v.to_bits(), want.to_bits(), "{}", t);
            }
            prop_assert_eq!(finite(&t).map(f64::to_bits), t.parse::<f64>().ok().filter(|v| v.is_finite()).map(f64::to_bits), "{}", t);
        }

        #[test]
        fn number_never_panics(s in "\\PC*") {
            let _ = number(&s);
        }

        #[test]
        fn number_never_panics_on_number_like_text(s in "[ (!)0-9,.+eE-]{0,12}") {
            if let Some(v) = number(&s) {
                prop_assert!(v.is_finite());
            }
        }

        #[test]
        fn scale_never_panics(s in "\\PC*") {
            let sc = scale(&s);
            prop_assert!(sc.pow10.abs() <= 24);
        }

        #[test]
        fn thousands_separated_integers_round_trip(n in any::<u64>(), neg in any::<bool>(), frac in proptest::option::of(0u32..100)) {
            let mut text = grouped(n);
            let mut plain = n.to_string();
            if let Some(f) = frac {
                text = format!("{text}.{f:02}");
                plain = format!("{plain}.{f:02}");
            }
            if neg {
                text.insert(0, '-');
                plain.insert(0, '-');
            }
            prop_assert_eq!(number(&text), Some(plain.parse::<f64>().unwrap()), "{}", text);
            prop_assert_eq!(number(&format!("  {text} ")), number(&text));
        }

        #[test]
        fn misplaced_separators_are_not_numbers(a in 1u32..1000, b in 0u32..100) {
            // "12,34" is a list or a locale decimal, not ncu's grouping: keep it as text.
            let text = format!("{a},{b:02}");
            prop_assert_eq!(number(&text), None);
        }

        #[test]
        fn prefixed_units_scale_like_their_base(i in 0..PREFIXED.len(), v in -1e12f64..1e12) {
            let (prefixed, base) = PREFIXED[i];
            let p = scale(prefixed);
            let b = scale(base);
            prop_assert_eq!(p.base, b.base, "{} and {} share a base", prefixed, base);
            // Applying the prefixed scale equals applying the base one to v × 10^(difference).
            let shifted = Scale { base: p.base, pow10: p.pow10 - b.pow10 }.apply(v);
            prop_assert!(close(p.apply(v), b.apply(shifted)), "{} {}: {} vs {}", v, prefixed, p.apply(v), b.apply(shifted));
            // Scaling is linear and keeps the sign; exact for powers of ten.
            prop_assert!(close(p.apply(2.0 * v), 2.0 * p.apply(v)));
            prop_assert_eq!(p.apply(v).signum(), v.signum());
            prop_assert!(close(p.apply(1.0), 10f64.powi(p.pow10)));
        }
    }
}
