//! What a caught panic said.

use std::any::Any;

/// The message a panic was raised with (`panic!` with a literal or a
/// formatted text), if it carried one.
pub fn message(payload: &(dyn Any + Send)) -> Option<&str> {
    payload
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
}
