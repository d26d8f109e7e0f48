//! `smi`: (being written).
