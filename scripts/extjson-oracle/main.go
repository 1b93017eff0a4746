// extjson-oracle writes each BSON document of a stream (a mongodump .bson file on stdin) as one
// line of canonical Extended JSON, with the same library call MongoDB's bsondump makes for its
// default output: bson.MarshalExtJSON(doc, canonical=true, escapeHTML=false) from the Go driver
// (go.mongodb.org/mongo-driver/v2, the version mongo-tools pins). A test oracle for bson2json's
// `--dialect canonical`, buildable from the Go module proxy where mongo-tools itself is not.
package main

import (
	"bufio"
	"encoding/binary"
	"fmt"
	"io"
	"os"

	"go.mongodb.org/mongo-driver/v2/bson"
)

func main() {
	in := bufio.NewReaderSize(os.Stdin, 1<<20)
	out := bufio.NewWriterSize(os.Stdout, 1<<20)
	defer out.Flush()
	var head [4]byte
	for n := 0; ; n++ {
		if _, err := io.ReadFull(in, head[:]); err == io.EOF {
			return
		} else if err != nil {
			fail(n, err)
		}
		size := int(binary.LittleEndian.Uint32(head[:]))
		if size < 5 || size > 64<<20 {
			fail(n, fmt.Errorf("bad document length %d", size))
		}
		doc := make([]byte, size)
		copy(doc, head[:])
		if _, err := io.ReadFull(in, doc[4:]); err != nil {
			fail(n, err)
		}
		text, err := bson.MarshalExtJSON(bson.Raw(doc), true, false)
		if err != nil {
			fail(n, err)
		}
		out.Write(text)
		out.WriteByte('\n')
	}
}

func fail(n int, err error) {
	fmt.Fprintf(os.Stderr, "extjson-oracle: document %d: %v\n", n, err)
	os.Exit(1)
}
