//! MongoDB's own shapes, read in place without transcoding: a cursor reply's `cursor`
//! document ([`cursor`]) and a change-stream event's routing fields ([`change`]). Both list
//! top-level elements with `raw`; the documents they locate are transcoded where they lie.

pub mod change;
pub mod cursor;

pub use change::{change_event_fields, resume_token_data, EventField, Part};
pub use cursor::{cursor_parts, CursorParts};
