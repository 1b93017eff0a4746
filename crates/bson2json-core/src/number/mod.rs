//! Numbers and dates as text, each kind in its own file: `double` (ECMAScript
//! `Number::toString` and Extended JSON doubles), `integer` (SWAR decimal digits) and `date`
//! (`Date.prototype.toISOString` and the Extended JSON relaxed date form). The walker and the
//! `compat` value shapes use them through the re-exports below.

mod date;
mod double;
mod integer;

pub use date::{write_iso_date, write_iso_date_plain, JS_DATE_MAX_MS};
pub use double::{
    write_ejson_double, write_ejson_double_plain, write_go_float, write_go_float_plain,
    write_java_double, write_java_double_plain, write_js_double, write_js_double_plain,
    write_js_number, write_js_number_plain,
};
pub(crate) use integer::write_i64_inline;
pub use integer::{write_i64, write_u64, write_u64_plain};
