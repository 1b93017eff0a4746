//! Change-stream batches: one call per `aggregate`/`getMore` reply. The routing fields of each
//! event are extracted here, in Rust, and the document parts become JSON text in the chosen
//! dialect; nothing is deserialized into JS objects by js-bson on this path.

use bson2json_core::mongo::{
    change_event_fields, cursor_parts, resume_token_data, CursorParts, EventField, Part,
};
use bson2json_core::{Error as CoreError, Options, Transcoder};
use napi::bindgen_prelude::*;
use napi_derive::napi;

use crate::node_api::{self, Value};
use crate::{bytes_of, check_regexes, make_string, options, throw_transcode_error};

fn js_str(env: &Env, s: &[u8]) -> Result<Value> {
    node_api::string_utf8(env, s)
}

fn set(env: &Env, obj: Value, key: &std::ffi::CStr, value: Value) -> Result<()> {
    node_api::set_named(env, obj, key, value)
}

/// Property names made once per call: `napi_set_named_property` makes the name's V8 string and
/// looks it up in V8's string table on every call, ten times per event; a name made once is
/// looked up on its first use and reused for every later event of the batch.
#[derive(Default)]
struct Keys {
    made: Vec<(*const std::ffi::c_char, Value)>,
}

impl Keys {
    fn set(
        &mut self,
        env: &Env,
        obj: Value,
        key: &'static std::ffi::CStr,
        value: Value,
    ) -> Result<()> {
        let p = key.as_ptr();
        let k = match self.made.iter().find(|(q, _)| *q == p) {
            Some(&(_, k)) => k,
            None => {
                let k = js_str(env, key.to_bytes())?;
                self.made.push((p, k));
                k
            }
        };
        // The keys are made in the current call and dropped with `self` before it returns.
        node_api::set_property(env, obj, k, value)
    }
}

use node_api::{date, null, number, object as new_object};

/// Transcodes `doc` (a complete BSON document) to a JS string through the thread's buffers.
// The thread state is passed split into its fields because it is borrowed once by the caller.
#[allow(clippy::too_many_arguments)]
fn json_value(
    env: &Env,
    tc: &mut Transcoder,
    out: &mut Vec<u8>,
    wide: &mut Vec<u16>,
    regexes: &mut Vec<(Option<usize>, bson2json_core::RegexRecord)>,
    index: usize,
    doc: &[u8],
    opts: &Options,
) -> std::result::Result<Value, Either<CoreError, Error>> {
    out.clear();
    tc.transcode(doc, opts, out).map_err(Either::A)?;
    regexes.extend(tc.regexes().iter().cloned().map(|r| (Some(index), r)));
    make_string(env, out, wide).map_err(Either::B)
}

/// A resume token as a JS value: `{ _data: string }` built directly for the format every
/// MongoDB version uses; any other shape as its canonical Extended JSON text (the wrapper
/// parses it with `EJSON.parse`). `data` is the token's `_data` string, when that is its shape
/// ([`resume_token_data`]).
fn token_value(
    env: &Env,
    doc: &[u8],
    data: Option<&[u8]>,
    tc: &mut Transcoder,
    out: &mut Vec<u8>,
    wide: &mut Vec<u16>,
) -> std::result::Result<(Value, bool), Either<CoreError, Error>> {
    if let Some(data) = data {
        let o = new_object(env).map_err(Either::B)?;
        let s = js_str(env, data).map_err(Either::B)?;
        set(env, o, c"_data", s).map_err(Either::B)?;
        return Ok((o, true));
    }
    out.clear();
    tc.transcode(
        doc,
        &Options::with_dialect(bson2json_core::Dialect::Canonical),
        out,
    )
    .map_err(Either::A)?;
    Ok((make_string(env, out, wide).map_err(Either::B)?, false))
}

/// One raw change-stream reply's `cursor` document → `{ id, ns, postBatchResumeToken,
/// events }`. With `whole`, each event also carries `json`, the whole event as one JSON string
/// (in `compat` exactly `JSON.stringify` of what the driver's own `watch()` yields).
#[napi(
    js_name = "transcodeChangeBatch",
    catch_unwind,
    ts_args_type = "cursor: Uint8Array, whole: boolean, flags: number, maxDepth: number, maxOutputBytes: number",
    ts_return_type = "{ id: bigint; ns: string | null; postBatchResumeToken: { _data: string } | null; postBatchResumeTokenEJSON?: string; events: RawChangeEvent[] }"
)]
pub fn transcode_change_batch<'env>(
    env: &'env Env,
    cursor: Unknown<'env>,
    whole: bool,
    flags: u32,
    max_depth: u32,
    max_output_bytes: f64,
) -> Result<Unknown<'env>> {
    let opts = options(flags, max_depth, max_output_bytes);
    // Copied: the events are read while their JS objects are built, and setting a property
    // can run JavaScript (a setter on `Object.prototype`) that could detach a borrowed input.
    // (A reply is one network round trip's worth of data; the copy is small beside it.)
    #[allow(unsafe_code)]
    // SAFETY: copied at once (`into_owned`); nothing runs in between.
    let bytes = unsafe { bytes_of(env, Value::of_unknown(&cursor), &"cursor")? }.into_owned();
    let bytes = &bytes[..];
    let mut parts = CursorParts::default();
    if let Err(e) = cursor_parts(bytes, &mut parts) {
        return Err(throw_transcode_error(env, &e, None));
    }
    let mut regexes = Vec::new();
    let built = crate::with_state(
        |st| -> std::result::Result<Value, Either<(usize, CoreError), Error>> {
            let (tc, out, wide) = (&mut st.transcoder, &mut st.out, &mut st.wide);
            let result = new_object(env).map_err(Either::B)?;
            let idv = node_api::bigint(env, parts.id).map_err(Either::B)?;
            set(env, result, c"id", idv).map_err(Either::B)?;
            let nsv = match parts.ns {
                Some((a, b)) => js_str(env, &bytes[a..b]),
                None => null(env),
            }
            .map_err(Either::B)?;
            set(env, result, c"ns", nsv).map_err(Either::B)?;
            let pbrt = match parts.post_batch_resume_token {
                Some((a, b)) => {
                    let token = &bytes[a..b];
                    let data = resume_token_data(token)
                        .map_err(|x| Either::A((0, x.shifted(a))))?
                        .map(|r| &token[r]);
                    let (v, plain) = token_value(env, token, data, tc, out, wide)
                        .map_err(|e| e.map_a(|x| (0, x)))?;
                    if !plain {
                        set(env, result, c"postBatchResumeTokenEJSON", v).map_err(Either::B)?;
                        null(env).map_err(Either::B)?
                    } else {
                        v
                    }
                }
                None => null(env).map_err(Either::B)?,
            };
            set(env, result, c"postBatchResumeToken", pbrt).map_err(Either::B)?;

            let arr = node_api::array(env, parts.docs.len()).map_err(Either::B)?;
            let mut fields = Vec::new();
            let mut keys = Keys::default();
            for (i, &(a, b)) in parts.docs.iter().enumerate() {
                let ev = &bytes[a..b];
                let at = |off: usize| {
                    move |e: Either<CoreError, Error>| e.map_a(|x| (i, x.shifted(off)))
                };
                change_event_fields(ev, &mut fields).map_err(|e| Either::A((i, e.shifted(a))))?;
                let o = new_object(env).map_err(Either::B)?;
                for field in &fields {
                    let (key, value): (&'static std::ffi::CStr, Value) = match field {
                        EventField::ResumeToken { doc, data } => {
                            let data = data.clone().map(|r| &ev[r]);
                            let (tv, plain) =
                                token_value(env, &ev[doc.clone()], data, tc, out, wide)
                                    .map_err(at(a + doc.start))?;
                            (
                                if plain {
                                    c"resumeToken"
                                } else {
                                    c"resumeTokenEJSON"
                                },
                                tv,
                            )
                        }
                        EventField::OperationType(r) => (
                            c"operationType",
                            js_str(env, &ev[r.clone()]).map_err(Either::B)?,
                        ),
                        EventField::Ns { db, coll } => {
                            let nso = new_object(env).map_err(Either::B)?;
                            for (k, r) in [(c"db", db), (c"coll", coll)] {
                                if let Some(r) = r {
                                    let sv = js_str(env, &ev[r.clone()]).map_err(Either::B)?;
                                    keys.set(env, nso, k, sv).map_err(Either::B)?;
                                }
                            }
                            (c"ns", nso)
                        }
                        EventField::ClusterTime { t, i: inc } => {
                            let to = new_object(env).map_err(Either::B)?;
                            let tv = number(env, f64::from(*t)).map_err(Either::B)?;
                            keys.set(env, to, c"t", tv).map_err(Either::B)?;
                            let iv = number(env, f64::from(*inc)).map_err(Either::B)?;
                            keys.set(env, to, c"i", iv).map_err(Either::B)?;
                            (c"clusterTime", to)
                        }
                        EventField::WallTime(ms) => {
                            (c"wallTime", date(env, *ms as f64).map_err(Either::B)?)
                        }
                        EventField::SplitEvent { fragment, of } => {
                            let so = new_object(env).map_err(Either::B)?;
                            for (k, x) in [(c"fragment", fragment), (c"of", of)] {
                                if let Some(x) = x {
                                    let xv = number(env, f64::from(*x)).map_err(Either::B)?;
                                    keys.set(env, so, k, xv).map_err(Either::B)?;
                                }
                            }
                            (c"splitEvent", so)
                        }
                        EventField::DocumentKey(r) => (
                            c"documentKey",
                            json_value(env, tc, out, wide, &mut regexes, i, &ev[r.clone()], &opts)
                                .map_err(at(a + r.start))?,
                        ),
                        EventField::Part(part, r) if !whole => {
                            let key = match part {
                                Part::FullDocument => c"fullDocument",
                                Part::FullDocumentBeforeChange => c"fullDocumentBeforeChange",
                                Part::UpdateDescription => c"updateDescription",
                            };
                            let value = match r {
                                Some(r) => json_value(
                                    env,
                                    tc,
                                    out,
                                    wide,
                                    &mut regexes,
                                    i,
                                    &ev[r.clone()],
                                    &opts,
                                )
                                .map_err(at(a + r.start))?,
                                None => null(env).map_err(Either::B)?,
                            };
                            (key, value)
                        }
                        EventField::Part(..) => continue,
                    };
                    keys.set(env, o, key, value).map_err(Either::B)?;
                }
                if whole {
                    let j = json_value(env, tc, out, wide, &mut regexes, i, ev, &opts)
                        .map_err(at(a))?;
                    keys.set(env, o, c"json", j).map_err(Either::B)?;
                }
                node_api::set_element(env, arr, i as u32, o).map_err(Either::B)?;
            }
            set(env, result, c"events", arr).map_err(Either::B)?;
            Ok(result)
        },
    );
    let value = match built {
        Ok(v) => v,
        Err(Either::A((i, e))) => {
            let msg = format!("{}: {} (event {i})", e.code(), e);
            return Err(crate::throw_coded(env, e.code(), &msg, e.offset(), Some(i)));
        }
        Err(Either::B(e)) => return Err(e),
    };
    if !regexes.is_empty() {
        check_regexes(env, regexes)?;
    }
    Ok(value.into_unknown(env))
}

trait MapA<A, B> {
    fn map_a<C>(self, f: impl FnOnce(A) -> C) -> Either<C, B>;
}

impl<A, B> MapA<A, B> for Either<A, B> {
    fn map_a<C>(self, f: impl FnOnce(A) -> C) -> Either<C, B> {
        match self {
            Either::A(a) => Either::A(f(a)),
            Either::B(b) => Either::B(b),
        }
    }
}
