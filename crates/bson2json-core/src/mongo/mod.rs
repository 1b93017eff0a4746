//! MongoDB's own shapes, read in place without transcoding: a cursor reply's `cursor`
//! document ([`cursor`]), a change-stream event's routing fields ([`change`]) and the events a
//! `$changeStreamSplitLargeEvent` stage split, merged back ([`split`]). They list top-level
//! elements with `raw`; the documents they locate are transcoded where they lie. A batch of
//! change events is written in the packed layout that [`layout`] declares by [`packer`].

pub mod change;
pub mod cursor;
pub mod layout;
pub mod packer;
pub mod split;

pub use change::{
    change_event_fields, change_event_fields_plain, last_member_object, resume_token_data,
    EventField, Part,
};
pub use cursor::{cursor_parts, CursorParts};
pub use layout::{ChangeOp, EventFormat};
pub use packer::{EventPacker, PackScratch, PackSink, Packed};
pub use split::merge_fragments;
