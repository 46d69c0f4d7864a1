/**
 * A minimal, deterministic ONNX (protobuf) writer for the static embedding model: the graph is a
 * Gather of a token table by input_ids, masked by attention_mask, with token_type_ids accepted
 * (gathered from an all-zero table and added) so that it has exactly the inputs and output of a
 * sentence-transformers export. Hand-written so the service can build it at run time without the
 * onnx-proto dev dependency (the tests decode it with onnx-proto as a cross-check). Field numbers
 * are those of onnx/onnx.proto (IR version 8, opset 14).
 */

class Writer {
  private parts: Uint8Array[] = [];
  private size = 0;

  private push(bytes: Uint8Array): void {
    this.parts.push(bytes);
    this.size += bytes.length;
  }

  varint(value: number | bigint): this {
    let v = BigInt.asUintN(64, BigInt(value));
    const out: number[] = [];
    do {
      let byte = Number(v & 0x7fn);
      v >>= 7n;
      if (v) byte |= 0x80;
      out.push(byte);
    } while (v);
    this.push(Uint8Array.from(out));
    return this;
  }

  key(field: number, wire: number): this {
    return this.varint((field << 3) | wire);
  }

  int(field: number, value: number): this {
    return this.key(field, 0).varint(value);
  }

  bytes(field: number, data: Uint8Array): this {
    this.key(field, 2).varint(data.length);
    this.push(data);
    return this;
  }

  string(field: number, value: string): this {
    return this.bytes(field, new TextEncoder().encode(value));
  }

  message(field: number, build: (w: Writer) => void): this {
    const inner = new Writer();
    build(inner);
    return this.bytes(field, inner.finish());
  }

  finish(): Uint8Array {
    const out = new Uint8Array(this.size);
    let offset = 0;
    for (const p of this.parts) {
      out.set(p, offset);
      offset += p.length;
    }
    return out;
  }
}

const FLOAT = 1;
const INT64 = 7;
const ATTR_INT = 2;

function tensor(w: Writer, name: string, dims: number[], dataType: number, raw: Uint8Array): void {
  for (const d of dims) w.int(1, d);
  w.int(2, dataType);
  w.string(8, name);
  w.bytes(9, raw);
}

function node(w: Writer, opType: string, name: string, inputs: string[], outputs: string[], intAttrs: Record<string, number> = {}): void {
  for (const i of inputs) w.string(1, i);
  for (const o of outputs) w.string(2, o);
  w.string(3, name);
  w.string(4, opType);
  for (const [attr, value] of Object.entries(intAttrs)) w.message(5, (a) => a.string(1, attr).int(3, value).int(20, ATTR_INT));
}

function valueInfo(w: Writer, name: string, elemType: number, dims: (number | string)[]): void {
  w.string(1, name);
  w.message(2, (t) =>
    t.message(1, (tt) => {
      tt.int(1, elemType);
      tt.message(2, (shape) => {
        for (const d of dims) shape.message(1, (dim) => (typeof d === 'number' ? dim.int(1, d) : dim.string(2, d)));
      });
    }),
  );
}

function littleEndian(data: Float32Array): Uint8Array {
  const out = new Uint8Array(data.length * 4);
  const view = new DataView(out.buffer);
  for (let i = 0; i < data.length; i++) view.setFloat32(i * 4, data[i], true);
  return out;
}

/** Serialised ONNX bytes: table is [vocab, dimension] row-major. */
export function staticEmbeddingOnnx(table: Float32Array, vocab: number, dimension: number, producer: string): Uint8Array {
  if (table.length !== vocab * dimension) throw new Error('token table size does not match vocab × dimension');
  const minusOne = new Uint8Array(8);
  new DataView(minusOne.buffer).setBigInt64(0, -1n, true);
  const model = new Writer();
  model.int(1, 8); // ir_version
  model.string(2, producer);
  model.message(7, (g) => {
    g.message(1, (n) => node(n, 'Gather', 'gather_tokens', ['token_embeddings', 'input_ids'], ['tokens'], { axis: 0 }));
    g.message(1, (n) => node(n, 'Gather', 'gather_types', ['token_type_embeddings', 'token_type_ids'], ['types'], { axis: 0 }));
    g.message(1, (n) => node(n, 'Add', 'add_types', ['tokens', 'types'], ['summed']));
    g.message(1, (n) => node(n, 'Cast', 'cast_mask', ['attention_mask'], ['mask_f'], { to: FLOAT }));
    g.message(1, (n) => node(n, 'Unsqueeze', 'unsqueeze_mask', ['mask_f', 'unsqueeze_axes'], ['mask_3d']));
    g.message(1, (n) => node(n, 'Mul', 'mask', ['summed', 'mask_3d'], ['last_hidden_state']));
    g.string(2, 'hearth_static_embedding');
    g.message(5, (t) => tensor(t, 'token_embeddings', [vocab, dimension], FLOAT, littleEndian(table)));
    g.message(5, (t) => tensor(t, 'token_type_embeddings', [2, dimension], FLOAT, new Uint8Array(2 * dimension * 4)));
    g.message(5, (t) => tensor(t, 'unsqueeze_axes', [1], INT64, minusOne));
    g.message(11, (v) => valueInfo(v, 'input_ids', INT64, ['batch_size', 'sequence_length']));
    g.message(11, (v) => valueInfo(v, 'attention_mask', INT64, ['batch_size', 'sequence_length']));
    g.message(11, (v) => valueInfo(v, 'token_type_ids', INT64, ['batch_size', 'sequence_length']));
    g.message(12, (v) => valueInfo(v, 'last_hidden_state', FLOAT, ['batch_size', 'sequence_length', dimension]));
  });
  model.message(8, (o) => o.string(1, '').int(2, 14)); // opset_import
  return model.finish();
}
