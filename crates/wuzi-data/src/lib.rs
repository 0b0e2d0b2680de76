//! Training data without libtorch: game records (Gomocup TSV, Piskvork PSQ,
//! self-play TSV with search targets) read, checked against the rules and
//! sampled into positions ([`records`]), and encoded positions written out
//! for trainers outside the engine ([`export`], `wuzi-encode`).

pub mod export;
pub mod held_out;
pub mod records;
pub mod tournament;
