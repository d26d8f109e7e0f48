//! The formats of `coalprof check`'s verdicts ([`crate::gate::Report`]): the terminal table
//! ([`table`]; the JSON and the HTML page are chosen beside it in `render::render_check`), the
//! checks as CSV ([`csv`]), and
//! the files and streams CI reads: JUnit XML ([`junit`]), GitHub annotations ([`github`]) and
//! the step-summary markdown ([`markdown`]).

pub(crate) mod csv;
pub(crate) mod github;
pub(crate) mod junit;
pub(crate) mod markdown;
pub(crate) mod table;
