//! `nvcc`: (being written).
