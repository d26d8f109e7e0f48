//! Kernel names as people compare them. ncu reports the demangled signature
//! (`void thrust::THRUST_200301_890_NS::cuda_cub::core::_kernel_agent<…>(…)`); the same kernel
//! of the same program, built for another GPU or another library release, carries another
//! inline namespace (`THRUST_200301_900_NS`, `CUB_200500_800_NS`, libcu++'s `__4`). Matching
//! across GPUs and commits takes the signature without those namespaces and without its
//! parameter list; tables show the bare function name, messages a long one cut in the middle
//! ([`quoted`]). And a file name made of any of them ([`safe_name`]): the run folder's, a
//! plot's, a task's.

use std::sync::LazyLock;

use regex::Regex;

/// Inline namespaces that encode a library version or a target architecture.
static INLINE_NS: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"\b(?:THRUST|CUB)_[0-9]+(?:_[0-9]+)*_NS::|\b__[0-9]+::").expect("a valid regex"));

/// Whether `INLINE_NS` can match: it needs `_NS::` or `__` before a digit. Most names have
/// neither, and then the regex is never built (0.1 ms of every command that reads a report).
fn may_have_inline_ns(s: &str) -> bool {
    s.contains("_NS::") || s.match_indices("__").any(|(i, _)| s.as_bytes().get(i + 2).is_some_and(u8::is_ascii_digit))
}

/// The signature as kernels are matched by: inline namespaces dropped, no return type, no
/// parameter list, template arguments kept (two instantiations are two kernels). Only a C++
/// signature is shortened: a name that is none (a model expression such as `lane * 33`, a
/// variant) is kept as it was given.
pub(crate) fn match_name(signature: &str) -> String {
    let signature = signature.trim();
    let s = if may_have_inline_ns(signature) { INLINE_NS.replace_all(signature, "") } else { signature.into() };
    if !is_signature(&s) {
        return s.into_owned();
    }
    let s = strip_return_type(&s);
    strip_parameters(s).trim().to_string()
}

/// Whether `s` reads as a C++ signature: a name followed straight by its parameter list or its
/// template arguments (`k(`, `k<`, `operator()(`). An expression has an operator or a space
/// before its parentheses, and no `<`.
fn is_signature(s: &str) -> bool {
    s.char_indices().any(|(i, c)| {
        matches!(c, '(' | '<')
            && s[..i].chars().next_back().is_some_and(|p| p.is_alphanumeric() || matches!(p, '_' | '>' | ')'))
    })
}

/// The bare function name for tables: [`match_name`] without its template arguments
/// (`thrust::cuda_cub::core::_kernel_agent`).
pub(crate) fn function_name(signature: &str) -> String {
    let full = match_name(signature);
    let mut out = String::with_capacity(full.len());
    let mut depth = 0usize;
    for c in full.chars() {
        match c {
            '<' => depth += 1,
            '>' if depth > 0 => depth -= 1,
            _ if depth == 0 => out.push(c),
            _ => {}
        }
    }
    let out = out.trim();
    if out.is_empty() {
        full
    } else {
        out.to_string()
    }
}

/// A kernel as a message names it, in backticks: past [`MESSAGE_NAME`] characters cut in the
/// middle, as terminal tables' titles are (a CUTLASS instantiation runs to thousands of
/// characters, and a message is read on a terminal; both ends tell two kernels apart).
pub(crate) fn quoted(kernel: &str) -> String {
    format!("`{}`", crate::text::cut_middle(kernel, MESSAGE_NAME))
}

/// The longest kernel name a message shows: the default width of a terminal table's title.
const MESSAGE_NAME: usize = 96;

/// `void f<…>(…)` → `f<…>(…)`: a leading word followed by a space outside any brackets.
fn strip_return_type(s: &str) -> &str {
    let mut depth = 0i32;
    for (i, c) in s.char_indices() {
        match c {
            '<' | '(' => depth += 1,
            '>' | ')' => depth -= 1,
            ' ' if depth == 0 => {
                let (head, rest) = (&s[..i], &s[i + 1..]);
                // Only a plain type word (`void`), never a piece of an operator name.
                if head.chars().all(|c| c.is_alphanumeric() || c == '_') && !rest.starts_with('(') {
                    return rest;
                }
                return s;
            }
            _ => {}
        }
    }
    s
}

/// Cut the parameter list: the first `(` outside template brackets, and what follows.
fn strip_parameters(s: &str) -> &str {
    let mut depth = 0i32;
    for (i, c) in s.char_indices() {
        match c {
            '<' => depth += 1,
            '>' => depth -= 1,
            '(' if depth <= 0 && i > 0 => return &s[..i],
            _ => {}
        }
    }
    s
}

/// A file name from any kernel or run name: `/`, `<>`, `:`, `,`, spaces and the like become `_`.
pub(crate) fn safe_name(s: &str) -> String {
    let cleaned: String =
        s.chars().map(|c| if c.is_ascii_alphanumeric() || "-_.".contains(c) { c } else { '_' }).collect();
    let trimmed = cleaned.trim_matches('.');
    let mut out: String = trimmed.chars().take(120).collect();
    if out.is_empty() {
        out.push('_');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_quote_a_long_kernel_by_both_ends() {
        assert_eq!(quoted("void k(int)"), "`void k(int)`");
        let long = format!("void cutlass::Kernel<{}>(T1::Params)", "cutlass::gemm::GemmShape<128>, ".repeat(200));
        let q = quoted(&long);
        assert_eq!(q.chars().count(), MESSAGE_NAME + 2);
        assert!(q.starts_with("`void cutlass::Kernel<") && q.ends_with("(T1::Params)`") && q.contains('…'), "{q}");
    }

    #[test]
    fn safe_names_from_cpp_kernels() {
        assert_eq!(
            safe_name("void gemm<float, 128>(const float*, float*)"),
            "void_gemm_float__128__const_float___float__"
        );
        assert_eq!(safe_name("a/b:c,d e"), "a_b_c_d_e");
        assert_eq!(safe_name(".."), "_");
    }

    #[test]
    fn inline_namespaces_return_types_and_parameters_go() {
        let h100 = "void thrust::THRUST_200301_900_NS::cuda_cub::core::_kernel_agent<thrust::THRUST_200301_900_NS::cuda_cub::__fill::functor<int *, int>, unsigned long>(T1, T2)";
        let ada = "void thrust::THRUST_200301_890_NS::cuda_cub::core::_kernel_agent<thrust::THRUST_200301_890_NS::cuda_cub::__fill::functor<int *, int>, unsigned long>(T1, T2)";
        assert_eq!(match_name(h100), match_name(ada));
        assert_eq!(
            match_name(h100),
            "thrust::cuda_cub::core::_kernel_agent<thrust::cuda_cub::__fill::functor<int *, int>, unsigned long>"
        );
        assert_eq!(function_name(ada), "thrust::cuda_cub::core::_kernel_agent");
        assert_eq!(
            function_name("void cub::CUB_200500_800_NS::DeviceReduceKernel<Policy>(int *)"),
            "cub::DeviceReduceKernel"
        );
        assert_eq!(match_name("cuda::std::__4::foo(int)"), "cuda::std::foo");
    }

    proptest::proptest! {
        #[test]
        fn the_prefilter_never_hides_an_inline_namespace(
            parts in proptest::collection::vec(
                proptest::prop_oneof!["THRUST_", "CUB_", "_NS::", "__", "::", "_", " ", "[0-9]{1,3}", "[a-z]{1,3}"],
                0..10,
            )
        ) {
            let s = parts.concat();
            proptest::prop_assert!(!INLINE_NS.is_match(&s) || may_have_inline_ns(&s), "{s}");
        }
    }

    #[test]
    fn names_that_are_no_signature_are_shown_as_given() {
        for given in ["lane * 33", "(block * 16 + lane) * 4", "lane * (stride + 1)", "my kernel", "stride_8"] {
            assert_eq!(match_name(given), given);
            assert_eq!(function_name(given), given);
        }
        assert_eq!(match_name("void k(int)"), "k");
        assert_eq!(match_name("void k<float>"), "k<float>");
        assert_eq!(
            match_name("cutlass::Kernel2<cutlass::gemm::Gemm>(Params)"),
            "cutlass::Kernel2<cutlass::gemm::Gemm>"
        );
    }

    #[test]
    fn plain_names_stay_as_they_are() {
        assert_eq!(match_name("vecAdd"), "vecAdd");
        assert_eq!(function_name("vecAdd(float *, float *, float *, int)"), "vecAdd");
        assert_eq!(function_name("void conv2d_naive(const float*, float*, int)"), "conv2d_naive");
        assert_eq!(function_name("ampere_sgemm_128x64_nn"), "ampere_sgemm_128x64_nn");
    }
}
