//! MongoDB's own shapes, read in place without transcoding: a cursor reply's `cursor`
//! document ([`cursor`]), a change-stream event's routing fields ([`change`]) and the events a
//! `$changeStreamSplitLargeEvent` stage split, merged back ([`split`]). They list top-level
//! elements with `raw`; the documents they locate are transcoded where they lie.

pub mod change;
pub mod cursor;
pub mod split;

pub use change::{
    change_event_fields, change_event_fields_plain, last_member_object, resume_token_data,
    EventField, Part,
};
pub use cursor::{cursor_parts, CursorParts};
pub use split::merge_fragments;
