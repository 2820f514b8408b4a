"""Writes, as hex, a FunctionDef exactly as TensorFlow serializes the
concrete function of

    @tf.function(input_signature=[tf.TensorSpec([3], tf.float32)] * 2)
    def f(x, y):
        return x * y + x

(what `f.get_concrete_function().function_def` prints, DataType names given
as their numbers: DT_FLOAT is 1), encoded by Python's protobuf with the
descriptor set of src/compat/tf_framework.proto: an encoder independent of
protobuf-c's.

usage: function_def_bytes.py <descriptor set>
Exit 77 when python3-protobuf is not installed.
"""

import sys

try:
    from google.protobuf import descriptor_pb2, descriptor_pool, text_format
    from google.protobuf import message_factory
except ImportError:
    sys.exit(77)

FUNCTION_DEF = """
signature {
  name: "__inference_f_13"
  input_arg { name: "x" type: 1 }
  input_arg { name: "y" type: 1 }
  output_arg { name: "identity" type: 1 }
}
attr { key: "_construction_context" value { s: "kEagerRuntime" } }
arg_attr {
  key: 0
  value {
    attr {
      key: "_output_shapes"
      value { list { shape { dim { size: 3 } } } }
    }
    attr { key: "_user_specified_name" value { s: "x" } }
  }
}
arg_attr {
  key: 1
  value {
    attr {
      key: "_output_shapes"
      value { list { shape { dim { size: 3 } } } }
    }
    attr { key: "_user_specified_name" value { s: "y" } }
  }
}
node_def {
  name: "mul"
  op: "Mul"
  input: "x"
  input: "y"
  attr { key: "T" value { type: 1 } }
  attr {
    key: "_output_shapes"
    value { list { shape { dim { size: 3 } } } }
  }
}
node_def {
  name: "add"
  op: "AddV2"
  input: "mul:z:0"
  input: "x"
  attr { key: "T" value { type: 1 } }
}
node_def {
  name: "Identity"
  op: "Identity"
  input: "add:z:0"
  attr { key: "T" value { type: 1 } }
}
ret { key: "identity" value: "Identity:output:0" }
"""


def main():
    files = descriptor_pb2.FileDescriptorSet()
    with open(sys.argv[1], "rb") as f:
        files.ParseFromString(f.read())
    pool = descriptor_pool.DescriptorPool()
    for file in files.file:
        pool.Add(file)
    descriptor = pool.FindMessageTypeByName("tensorflow.FunctionDef")
    if hasattr(message_factory, "GetMessageClass"):
        cls = message_factory.GetMessageClass(descriptor)
    else:
        cls = message_factory.MessageFactory(pool).GetPrototype(descriptor)
    message = text_format.Parse(FUNCTION_DEF, cls())
    # TensorFlow serializes deterministically (maps sorted by key).
    sys.stdout.write(message.SerializeToString(deterministic=True).hex())


if __name__ == "__main__":
    main()
