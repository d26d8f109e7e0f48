//! `ncu`: (being written).
