//! The one integration-test binary: one module per area.

mod check; // `coalprof check`: rules × fixture runs × baseline → outputs and exit codes
