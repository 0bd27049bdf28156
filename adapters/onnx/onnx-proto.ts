/**
 * The subset of ONNX's protobuf schema (onnx.proto, IR version 8) that the writer emits, as a
 * protobufjs reflection descriptor. Field numbers are the wire contract; names follow onnx.proto.
 */
import protobuf from "protobufjs";

const str = (id: number) => ({ type: "string", id });
const i64 = (id: number) => ({ type: "int64", id });
const msg = (type: string, id: number) => ({ type, id });
const many = (type: string, id: number) => ({ rule: "repeated", type, id });

const SCHEMA = {
  nested: {
    onnx: {
      nested: {
        ModelProto: {
          fields: {
            irVersion: i64(1),
            producerName: str(2),
            producerVersion: str(3),
            domain: str(4),
            modelVersion: i64(5),
            docString: str(6),
            graph: msg("GraphProto", 7),
            opsetImport: many("OperatorSetIdProto", 8),
          },
        },
        OperatorSetIdProto: { fields: { domain: str(1), version: i64(2) } },
        GraphProto: {
          fields: {
            node: many("NodeProto", 1),
            name: str(2),
            initializer: many("TensorProto", 5),
            docString: str(10),
            input: many("ValueInfoProto", 11),
            output: many("ValueInfoProto", 12),
            valueInfo: many("ValueInfoProto", 13),
          },
        },
        NodeProto: {
          fields: {
            input: many("string", 1),
            output: many("string", 2),
            name: str(3),
            opType: str(4),
            attribute: many("AttributeProto", 5),
            docString: str(6),
            domain: str(7),
          },
        },
        AttributeProto: {
          fields: {
            name: str(1),
            f: { type: "float", id: 2 },
            i: i64(3),
            s: { type: "bytes", id: 4 },
            t: msg("TensorProto", 5),
            floats: many("float", 7),
            ints: many("int64", 8),
            type: { type: "int32", id: 20 },
          },
        },
        TensorProto: {
          fields: {
            dims: many("int64", 1),
            dataType: { type: "int32", id: 2 },
            name: str(8),
            rawData: { type: "bytes", id: 9 },
            externalData: many("StringStringEntryProto", 13),
            dataLocation: { type: "int32", id: 14 },
          },
        },
        StringStringEntryProto: { fields: { key: str(1), value: str(2) } },
        ValueInfoProto: { fields: { name: str(1), type: msg("TypeProto", 2) } },
        TypeProto: { fields: { tensorType: msg("TypeProtoTensor", 1) } },
        TypeProtoTensor: {
          fields: { elemType: { type: "int32", id: 1 }, shape: msg("TensorShapeProto", 2) },
        },
        TensorShapeProto: { fields: { dim: many("Dimension", 1) } },
        Dimension: {
          oneofs: { value: { oneof: ["dimValue", "dimParam"] } },
          fields: { dimValue: i64(1), dimParam: str(2) },
        },
      },
    },
  },
};

/** The ModelProto message type, ready to encode plain objects. */
export const ModelProto = protobuf.Root.fromJSON(SCHEMA).lookupType("onnx.ModelProto");

/** AttributeProto.AttributeType codes. */
export const ATTRIBUTE_TYPE = Object.freeze({
  float: 1,
  int: 2,
  string: 3,
  tensor: 4,
  floats: 6,
  ints: 7,
});
