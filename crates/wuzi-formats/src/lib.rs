//! Every notation and record format Wuzi reads or writes, each parsed and
//! printed in one module:
//!
//! * [`notation`]: cells and moves written with letters (`h8`, `Xh7`).
//! * [`gomocup`]: the Gomocup protocol family's commands, replies and
//!   coordinates (`7,7`), for brains, managers and test brains alike.
//! * [`gtp`]: the Go Text Protocol's commands, responses and vertices.
//! * [`opening`]: opening files, in offsets or letters.
//! * [`record`]: game records, Piskvork PSQ and SGF.
//! * [`tsv`]: Gomocup TSV game records, self-play's included.
//! * [`bounded_read`]: reading a file or stream whose size the user
//!   controls, up to a limit, for every reader of the formats above.
//! * [`search_target`]: a self-play position's search targets as the TSV's
//!   `search` column writes them.
//!
//! Every parser says why it refused its input with its module's own error
//! type (`OpeningError`, `TsvError`, `SgfError`, ...), whose variants carry
//! the facts (line, offending text, board size) and whose `Display` is the
//! message that protocol replies and logs show.

pub mod bounded_read;
pub mod gomocup;
pub mod gtp;
pub mod notation;
pub mod opening;
pub mod record;
pub mod search_target;
pub mod tsv;
