//! The one integration-test binary. Each module tests one command or one external tool.

mod analyze;
mod bad_input;
mod real_ncu;
mod robust;
mod util;
