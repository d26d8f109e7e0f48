//! coalprof: shows how CUDA kernels touch memory.
//!
//! The data flows one way: pattern catalogue → build (nvcc) → profile (ncu) → parse → frame
//! (derived metrics) → render / gate. Each step is one module; `commands` glues them together.

pub mod error;
pub mod exit;
pub mod model;
pub mod patterns;
pub mod results;
pub mod tools;

pub use error::{Error, Result};
