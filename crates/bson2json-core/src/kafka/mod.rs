//! The Kafka connectors' record formats, written from raw change events: the MongoDB Java
//! driver's JSON writer ([`java`], with the table of the characters it leaves unescaped,
//! `java_chars`, generated from the real writer by scripts/kafka-java-chars.sh) and the records
//! the MongoDB Kafka connector and Debezium make of an event ([`records`]). The change-event
//! packer (`mongo::packer`) writes them as a batch's records in the formats
//! `EventFormat::RecordMongoKafka*` and `RecordDebezium*`.

pub mod java;
mod java_chars;
pub mod records;

pub use java::{write_java_string, JavaJson, JavaMode};
pub use records::{Connector, ConnectorRecords, KafkaContext};
