// The UTF-16 code units the MongoDB Java driver's JSON writer (org.bson.json.JsonWriter, which the
// MongoDB Kafka connector's DefaultJson and Debezium's MongoDB connector use) writes as they are
// inside a string; it writes every other one as a backslash-u escape (besides its short escapes). Run by
// scripts/kafka-java-chars.sh against the connectors' own bson jars: each code unit is written by
// the real writer and the ranges it kept are printed, one "FROM TO" (hex, inclusive) a line.
import java.io.StringWriter;
import org.bson.BsonDocument;
import org.bson.BsonString;
import org.bson.codecs.BsonDocumentCodec;
import org.bson.codecs.EncoderContext;
import org.bson.json.JsonMode;
import org.bson.json.JsonWriter;
import org.bson.json.JsonWriterSettings;

class KafkaJavaChars {
  public static void main(String[] args) {
    JsonWriterSettings settings = JsonWriterSettings.builder().outputMode(JsonMode.STRICT).build();
    BsonDocumentCodec codec = new BsonDocumentCodec();
    int from = -1;
    for (int c = 0; c <= 0x10000; c++) {
      boolean kept = false;
      if (c <= 0xFFFF) {
        StringWriter out = new StringWriter();
        codec.encode(new JsonWriter(out, settings), new BsonDocument("s", new BsonString(String.valueOf((char) c))), EncoderContext.builder().build());
        String text = out.toString();
        // {"s": "<c>"}: kept when the character itself is between the quotes
        kept = text.equals("{\"s\": \"" + (char) c + "\"}") && c != '"' && c != '\\';
      }
      if (kept && from < 0) from = c;
      if (!kept && from >= 0) {
        System.out.printf("%04x %04x%n", from, c - 1);
        from = -1;
      }
    }
  }
}
