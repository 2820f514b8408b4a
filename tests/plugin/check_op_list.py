"""Decodes a serialized OpList with Python's protobuf (an independent
decoder) and compares it with the text TensorFlow would print for the ops
of tests/plugin/custom_ops/ctor_ops.c.

usage: check_op_list.py <descriptor set> <OpList bytes>
Exit 0: equal; 1: different (both printed); 77: no python3-protobuf.
"""

import sys

try:
    from google.protobuf import descriptor_pb2, descriptor_pool, text_format
    from google.protobuf import message_factory
except ImportError:
    sys.exit(77)

# DataType numbers: DT_FLOAT 1, DT_INT32 3, DT_INT64 9.
EXPECTED = """
op {
  name: "CtorAddDelta"
  input_arg { name: "x" type: 1 }
  output_arg { name: "y" type: 1 }
  attr { name: "delta" type: "float" default_value { f: 0.5 } }
}
op {
  name: "CtorGather"
  input_arg { name: "values" type_attr: "T" number_attr: "N" }
  input_arg { name: "extras" type_list_attr: "Textra" }
  input_arg { name: "ref_count" type: 9 is_ref: true }
  output_arg { name: "out" type_attr: "T" }
  attr { name: "N" type: "int" has_minimum: true minimum: 2 }
  attr {
    name: "T" type: "type" default_value { type: 3 }
    allowed_values { list { type: 1 type: 3 } }
  }
  attr { name: "Textra" type: "list(type)" has_minimum: true }
  attr {
    name: "mode" type: "string" default_value { s: "max" }
    allowed_values { list { s: "sum" s: "max" } }
  }
  attr { name: "axes" type: "list(int)" default_value { list { i: 1 i: -2 } } }
  attr { name: "keep" type: "bool" default_value { b: true } }
  attr {
    name: "shape" type: "shape"
    default_value { shape { dim { size: 2 } dim { size: -1 } } }
  }
  deprecation { version: 7 explanation: "use CtorAddDelta" }
  is_stateful: true
  allows_uninitialized_input: true
}
"""


def main():
    descriptors = descriptor_pb2.FileDescriptorSet()
    with open(sys.argv[1], "rb") as f:
        descriptors.ParseFromString(f.read())
    pool = descriptor_pool.DescriptorPool()
    for file in descriptors.file:
        pool.Add(file)
    op_list_class = message_factory.GetMessageClass(
        pool.FindMessageTypeByName("tensorflow.OpList")) if hasattr(
            message_factory, "GetMessageClass") else \
        message_factory.MessageFactory(pool).GetPrototype(
            pool.FindMessageTypeByName("tensorflow.OpList"))
    decoded = op_list_class()
    with open(sys.argv[2], "rb") as f:
        decoded.ParseFromString(f.read())
    expected = op_list_class()
    text_format.Parse(EXPECTED, expected)
    if decoded != expected:
        print("decoded:\n" + text_format.MessageToString(decoded))
        print("expected:\n" + text_format.MessageToString(expected))
        return 1
    # Nothing on the wire that the messages do not define.
    if decoded.SerializeToString() != expected.SerializeToString():
        print("the bytes re-encode differently")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
