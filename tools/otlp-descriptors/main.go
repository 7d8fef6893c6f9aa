// Command otlp-descriptors writes the protobuf descriptors of the official
// OTLP definitions (opentelemetry-proto, as compiled into the Go module
// go.opentelemetry.io/proto/otlp) as one FileDescriptorSet. Onset's server
// builds its OTLP codecs from that file with protobufjs
// (apps/server/src/otlp/protobuf.ts). Regenerate after bumping the module:
//
//	cd tools/otlp-descriptors && go run . > ../../apps/server/src/otlp/otlp.binpb
package main

import (
	"os"
	"sort"
	"strings"

	_ "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	_ "go.opentelemetry.io/proto/otlp/collector/metrics/v1"
	_ "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
	"google.golang.org/protobuf/types/descriptorpb"
)

func main() {
	set := &descriptorpb.FileDescriptorSet{}
	protoregistry.GlobalFiles.RangeFiles(func(f protoreflect.FileDescriptor) bool {
		if strings.HasPrefix(f.Path(), "opentelemetry/proto/") {
			set.File = append(set.File, protodesc.ToFileDescriptorProto(f))
		}
		return true
	})
	// Dependencies first (common before resource before trace...), then by path: a stable file.
	sort.SliceStable(set.File, func(i, j int) bool { return set.File[i].GetName() < set.File[j].GetName() })
	out, err := proto.MarshalOptions{Deterministic: true}.Marshal(set)
	if err != nil {
		panic(err)
	}
	os.Stdout.Write(out)
}
