//! One module per subcommand: glue between typed settings and the library, no clap.

pub mod baseline;
pub mod check;
