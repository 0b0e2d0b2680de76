//! The match runner (being written).
