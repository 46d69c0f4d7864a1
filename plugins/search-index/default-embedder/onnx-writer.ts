/**
 * A minimal, deterministic ONNX (protobuf) writer for the static embedding model. The token table
 * is stored as int8 with one float scale per row (a quarter of float32: a smaller file, and a
 * quarter of the memory ONNX Runtime holds for it). The graph gathers the int8 rows by input_ids
 * and casts them to float; the per-token factor (row scale × attention_mask × a token_type factor
 * of 1) is gathered and multiplied at [batch, seq] size, so besides the Gather only one Cast and one
 * Mul work at [batch, seq, hidden] size. Inputs and output are exactly those of a
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
const INT8 = 3;
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

/**
 * Symmetric int8 quantisation, one scale per row (row r is q[r] × scales[r]): rows differ in length
 * by design (function words are scaled down), so one scale for the whole table left short rows a
 * few levels (one-word texts down to cosine 0.88 of float32); per row, pooled vectors stay within
 * cosine 0.9999 of float32.
 */
function quantizeRows(table: Float32Array, rows: number, dimension: number): { q: Int8Array; scales: Float32Array } {
  const q = new Int8Array(rows * dimension);
  const scales = new Float32Array(rows);
  for (let r = 0; r < rows; r++) {
    let max = 0;
    for (let j = 0; j < dimension; j++) max = Math.max(max, Math.abs(table[r * dimension + j]));
    if (max === 0) continue;
    const scale = Math.fround(max / 127);
    scales[r] = scale;
    for (let j = 0; j < dimension; j++) q[r * dimension + j] = Math.round(table[r * dimension + j] / scale);
  }
  return { q, scales };
}

/** Serialised ONNX bytes: table is [vocab, dimension] row-major float32, stored quantised. */
export function staticEmbeddingOnnx(table: Float32Array, vocab: number, dimension: number, producer: string): Uint8Array {
  if (table.length !== vocab * dimension) throw new Error('token table size does not match vocab × dimension');
  const { q, scales } = quantizeRows(table, vocab, dimension);
  const minusOne = new Uint8Array(8);
  new DataView(minusOne.buffer).setBigInt64(0, -1n, true);
  const model = new Writer();
  model.int(1, 8); // ir_version
  model.string(2, producer);
  model.message(7, (g) => {
    g.message(1, (n) => node(n, 'Gather', 'gather_tokens', ['token_embeddings', 'input_ids'], ['tokens_q'], { axis: 0 }));
    g.message(1, (n) => node(n, 'Cast', 'cast_tokens', ['tokens_q'], ['tokens'], { to: FLOAT }));
    g.message(1, (n) => node(n, 'Gather', 'gather_scales', ['token_scales', 'input_ids'], ['scales'], { axis: 0 }));
    g.message(1, (n) => node(n, 'Gather', 'gather_types', ['token_type_factors', 'token_type_ids'], ['type_factors'], { axis: 0 }));
    g.message(1, (n) => node(n, 'Cast', 'cast_mask', ['attention_mask'], ['mask_f'], { to: FLOAT }));
    g.message(1, (n) => node(n, 'Mul', 'scale_types', ['scales', 'type_factors'], ['typed_scales']));
    g.message(1, (n) => node(n, 'Mul', 'scale_mask', ['typed_scales', 'mask_f'], ['factors']));
    g.message(1, (n) => node(n, 'Unsqueeze', 'unsqueeze_factors', ['factors', 'unsqueeze_axes'], ['factors_3d']));
    g.message(1, (n) => node(n, 'Mul', 'scale_tokens', ['tokens', 'factors_3d'], ['last_hidden_state']));
    g.string(2, 'hearth_static_embedding');
    g.message(5, (t) => tensor(t, 'token_embeddings', [vocab, dimension], INT8, new Uint8Array(q.buffer)));
    g.message(5, (t) => tensor(t, 'token_scales', [vocab], FLOAT, littleEndian(scales)));
    g.message(5, (t) => tensor(t, 'token_type_factors', [2], FLOAT, littleEndian(new Float32Array([1, 1]))));
    g.message(5, (t) => tensor(t, 'unsqueeze_axes', [1], INT64, minusOne));
    g.message(11, (v) => valueInfo(v, 'input_ids', INT64, ['batch_size', 'sequence_length']));
    g.message(11, (v) => valueInfo(v, 'attention_mask', INT64, ['batch_size', 'sequence_length']));
    g.message(11, (v) => valueInfo(v, 'token_type_ids', INT64, ['batch_size', 'sequence_length']));
    g.message(12, (v) => valueInfo(v, 'last_hidden_state', FLOAT, ['batch_size', 'sequence_length', dimension]));
  });
  model.message(8, (o) => o.string(1, '').int(2, 14)); // opset_import
  return model.finish();
}
