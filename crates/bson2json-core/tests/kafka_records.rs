//! The connectors' records written by `bson2json_core::kafka` against the connectors' own
//! records, kept in `__test__/support/fixtures/kafka-connectors.json` (written by
//! mongo-kafka-connect 2.0.1 and debezium-connector-mongodb 3.0.8.Final from SecantusDB, with
//! `benchmark/kafka-connectors.sh formats`): the events are rebuilt here from the fixture's
//! writes and compared byte for byte (the fields that name the connector run, its clock or a
//! server's resume token set as the fixture has them). lib/kafka/records-plain.js, the
//! JavaScript twin, is compared with this writer by __test__/kafka/kafka.spec.ts.

use bson::{doc, Bson, Document};
use bson2json_core::kafka::{Connector, ConnectorRecords, JavaJson, JavaMode, KafkaContext};
use bson2json_core::mongo::change_event_fields;
use bson2json_core::Options;

fn fixture() -> serde_json::Value {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../__test__/support/fixtures/kafka-connectors.json"
    );
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// Extended JSON (canonical or relaxed) → a BSON document.
fn document(v: &serde_json::Value) -> Document {
    match Bson::try_from(v.clone()).unwrap() {
        Bson::Document(d) => d,
        other => panic!("not a document: {other:?}"),
    }
}

/// The documents the fixture's writes insert, `end` left out.
fn inserted(f: &serde_json::Value) -> Vec<Document> {
    f["writes"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|w| w.get("insert"))
        .map(document)
        .filter(|d| d.get_str("_id").ok() != Some("end"))
        .collect()
}

fn bytes(d: &Document) -> Vec<u8> {
    let mut out = Vec::new();
    d.to_writer(&mut out).unwrap();
    out
}

/// The key and value of the event `ev` for `connector`.
fn record(
    connector: Connector,
    ev: &Document,
    snapshot: bool,
    ctx: &KafkaContext,
) -> (String, String) {
    let ev = bytes(ev);
    let mut fields = Vec::new();
    change_event_fields(&ev, &mut fields).unwrap();
    let opts = Options::default();
    let records = ConnectorRecords::new(connector, &opts, ctx);
    assert!(records.has_record(&ev, &fields, snapshot));
    let (mut key, mut value) = (Vec::new(), Vec::new());
    records.key(&ev, &fields, snapshot, &mut key).unwrap();
    records.value(&ev, &fields, snapshot, &mut value).unwrap();
    (
        String::from_utf8(key).unwrap(),
        String::from_utf8(value).unwrap(),
    )
}

fn java(d: &Document, mode: JavaMode) -> String {
    let mut out = Vec::new();
    let opts = Options::default();
    JavaJson::new(&opts, mode)
        .document(&bytes(d), 0, &mut out)
        .unwrap();
    String::from_utf8(out).unwrap()
}

#[test]
fn snapshot_records_are_the_connectors_own() {
    let f = fixture();
    let snap = &f["snapshot"];
    let db = snap["db"].as_str().unwrap();
    let docs = inserted(&f);
    let event = |coll: &str, d: &Document| {
        let id = d.get("_id").unwrap().clone();
        doc! { "_id": { "k": id.clone() }, "operationType": "snapshot", "ns": { "db": db, "coll": coll }, "documentKey": { "_id": id }, "fullDocument": d.clone() }
    };
    // copy_existing's records, byte for byte
    let mk = snap["mongoKafka"]["records"].as_array().unwrap();
    let coll = snap["mongoKafka"]["coll"].as_str().unwrap();
    assert_eq!(mk.len(), docs.len());
    for (d, want) in docs.iter().zip(mk) {
        let (key, value) = record(
            Connector::MongoKafka,
            &event(coll, d),
            true,
            &KafkaContext::default(),
        );
        assert_eq!(key, want["key"].as_str().unwrap());
        assert_eq!(value, want["value"].as_str().unwrap());
    }
    // Debezium's initial snapshot: the same bytes with its name, version, clock and position; its
    // last record's "last" is the sink's (SnapshotCopy knows which record is the last)
    let dz = snap["debezium"]["records"].as_array().unwrap();
    let coll = snap["debezium"]["coll"].as_str().unwrap();
    for (d, want) in docs.iter().zip(dz) {
        let want_value = want["value"]
            .as_str()
            .unwrap()
            .replace(r#""snapshot":"last""#, r#""snapshot":"true""#);
        let v: serde_json::Value = serde_json::from_str(&want_value).unwrap();
        let ctx = KafkaContext {
            name: v["source"]["name"].as_str().unwrap().to_string(),
            version: v["source"]["version"].as_str().unwrap().to_string(),
            now_ms: v["ts_ms"].as_i64().unwrap(),
            at: Some((
                (v["source"]["ts_ms"].as_u64().unwrap() / 1000) as u32,
                v["source"]["ord"].as_u64().unwrap() as u32,
            )),
        };
        let (key, value) = record(Connector::Debezium, &event(coll, d), true, &ctx);
        assert_eq!(key, want["key"].as_str().unwrap());
        assert_eq!(value, want_value);
    }
}

#[test]
fn change_event_records_carry_the_connectors_documents_and_keys() {
    let f = fixture();
    let docs = inserted(&f);
    let ctx = KafkaContext::default();
    let insert = |d: &Document| {
        let id = d.get("_id").unwrap().clone();
        doc! {
            "_id": { "_data": "82" },
            "operationType": "insert",
            "clusterTime": Bson::Timestamp(bson::Timestamp { time: 1_700_000_000, increment: 3 }),
            "wallTime": bson::DateTime::from_millis(1_700_000_000_044),
            "fullDocument": d.clone(),
            "ns": { "db": "fmt", "coll": "c" },
            "documentKey": { "_id": id },
        }
    };
    let mk = &f["mongoKafka"];
    let dz = &f["debezium"];
    for (k, d) in docs.iter().enumerate() {
        // the MongoDB connector: the event in STRICT JSON (its fullDocument as the fixture
        // keeps it), the documentKey as the key
        let (key, value) = record(Connector::MongoKafka, &insert(d), false, &ctx);
        assert_eq!(key, mk["keys"][k].as_str().unwrap());
        if k == 0 {
            let full = mk["insertFullDocument"].as_str().unwrap();
            assert!(
                value.contains(&format!(
                    r#""fullDocument": {full}, "ns": {{"db": "fmt", "coll": "c"}}"#
                )),
                "{value}"
            );
            assert_eq!(java(d, JavaMode::Strict), full);
        }
        // Debezium: `after` and the key
        let (key, value) = record(Connector::Debezium, &insert(d), false, &ctx);
        assert_eq!(key, dz["keys"][k].as_str().unwrap());
        let v: serde_json::Value = serde_json::from_str(&value).unwrap();
        assert_eq!(v["after"], dz["values"][k]["after"]);
        assert_eq!(v["op"], "c");
    }
    // an update's description: STRICT for the MongoDB connector, Debezium's with its
    // updatedFields in RELAXED JSON (rebuilt from the connector's own text)
    let text = mk["updateDescription"].as_str().unwrap();
    let ud_json: serde_json::Value =
        serde_json::from_str(&text["\"updateDescription\": ".len()..]).unwrap();
    let ud = document(&ud_json);
    assert_eq!(
        format!("\"updateDescription\": {}", java(&ud, JavaMode::Strict)),
        text
    );
    let id = docs[0].get("_id").unwrap().clone();
    let update = doc! {
        "_id": { "_data": "82" },
        "operationType": "update",
        "clusterTime": Bson::Timestamp(bson::Timestamp { time: 1_700_000_000, increment: 4 }),
        "ns": { "db": "fmt", "coll": "c" },
        "documentKey": { "_id": id },
        "updateDescription": ud,
    };
    let (_, value) = record(Connector::Debezium, &update, false, &ctx);
    let v: serde_json::Value = serde_json::from_str(&value).unwrap();
    assert_eq!(v["updateDescription"], dz["values"][3]["updateDescription"]);
    assert_eq!(v["op"], "u");
}

#[test]
fn doubles_as_java_prints_them_and_their_plain_twin() {
    use bson2json_core::testing::{write_java_double, write_java_double_plain};
    let java = |x: f64| {
        let mut out = Vec::new();
        write_java_double(&mut out, x);
        String::from_utf8(out).unwrap()
    };
    let cases = [
        (1.0, "1.0"),
        (1.5, "1.5"),
        (1e7, "1.0E7"),
        (1e-3, "0.001"),
        (9.99e-4, "9.99E-4"),
        (123_456.789, "123456.789"),
        (1e21, "1.0E21"),
        (-0.0, "-0.0"),
        (0.0, "0.0"),
        (-2.5e-8, "-2.5E-8"),
        (1e-7, "1.0E-7"),
        (9_999_999.0, "9999999.0"),
        (f64::NAN, "NaN"),
        (f64::NEG_INFINITY, "-Infinity"),
        // the smallest double: the shortest digits, as Java 19+ prints it (Java 17: 4.9E-324)
        (5e-324, "5.0E-324"),
    ];
    for (x, want) in cases {
        assert_eq!(java(x), want, "{x}");
    }
    // the plain twin (Ryū's digits) over doubles of every magnitude
    let mut seed = 0x9e37_79b9_7f4a_7c15u64;
    for _ in 0..200_000 {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        let x = f64::from_bits(seed);
        let (mut a, mut b) = (Vec::new(), Vec::new());
        write_java_double(&mut a, x);
        write_java_double_plain(&mut b, x);
        assert_eq!(a, b, "{x:e}");
    }
}
