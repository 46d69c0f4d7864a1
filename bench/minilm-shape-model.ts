/**
 * An ONNX model with exactly the architecture, and so the compute, of all-MiniLM-L6-v2 (BERT: vocab
 * 30522, hidden 384, 6 layers, 12 heads, intermediate 1536, 512 positions, GELU by Erf) but seeded
 * random weights, with the real tokenizer. No pretrained weights exist on these machines and the
 * tiny test model costs nothing to run, so this is what makes "ingestion as a fraction of raw
 * embedding throughput" and "RSS with the embedder loaded" mean what they would with the real model.
 * The graph is the one PyTorch exports (MatMul + Add, Reshape [0,0,12,32], additive mask), so ONNX
 * Runtime's graph fusions see what they see in an exported file. About 90 MB: temp dirs only.
 * `int8` writes the same weights as ONNX Runtime's quantize_dynamic writes them, the form of the
 * file `models pull` installs by default (Xenova's onnx/model_quantized.onnx): about 23 MB.
 */
import { randomBytes } from 'node:crypto';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import onnxProto, { type onnx as OnnxTypes } from 'onnx-proto';
import { mulberry32 } from '../plugins/search-index/default-embedder/index.js';
import { installModel } from '../native/embeddings/index.js';
import { modelsRoot, type EmbeddingManifest } from '../native/model-files/index.js';
import { TOKENIZER_DIR } from '../test/fixtures/tiny-embedding-model.js';

const { onnx } = onnxProto; // CommonJS package: no named ESM exports at run time
const { FLOAT, INT64, INT8, UINT8 } = onnx.TensorProto.DataType;
const { INT, INTS, FLOAT: FLOAT_ATTR } = onnx.AttributeProto.AttributeType;

export const MINILM_SHAPE_MODEL_ID = 'minilm-shape-random';
export const MINILM_SHAPE_INT8_MODEL_ID = 'minilm-shape-int8-random';
/** all-MiniLM-L6-v2's config.json, the numbers that set the compute. */
export const MINILM_ARCHITECTURE = { vocab: 30522, hidden: 384, layers: 6, heads: 12, intermediate: 1536, maxPositions: 512, tokenTypes: 2, layerNormEps: 1e-12 } as const;
/** BERT's initializer_range. */
const INIT_STD = 0.02;

export interface MiniLmShapeOptions {
  /** Folder name under `${modelDir}/embeddings/`. */
  id?: string;
  /** The same seed writes byte-identical weights. */
  seed?: number;
  /** Recorded in the manifest; sentence-transformers runs all-MiniLM-L6-v2 at 256. */
  maxTokens?: number;
  /** Mark it ACTIVE (default true), as `models pull` does. */
  activate?: boolean;
  /**
   * false (default): a current export (opset 17, mask bias float32 min), which ONNX Runtime 1.30 runs
   * as separate MatMul/Softmax nodes. true: the older export (opset 12, decomposed LayerNorm, mask
   * bias -10000) that it fuses into its Attention kernel: a little less CPU and far less
   * activation memory at large batches. Which one a downloaded file is depends on its exporter.
   */
  fusedAttention?: boolean;
  /**
   * true: the weights of the same seed quantised as `quantize_dynamic(weight_type=QInt8)` does, one
   * scale per tensor. Each MatMul on a weight becomes DynamicQuantizeLinear of its input, MatMulInteger
   * with the int8 weight, Cast and Mul by the two scales, which ONNX Runtime fuses into its int8 matmul
   * kernel; the embedding tables are uint8 and dequantized after Gather. The real default model's compute.
   */
  int8?: boolean;
}

/** Builds nodes and initializers with generated names; constants are shared by value. */
class GraphBuilder {
  readonly node: OnnxTypes.INodeProto[] = [];
  readonly initializer: OnnxTypes.ITensorProto[] = [];
  private readonly constants = new Map<string, string>();
  private readonly rand: () => number;

  constructor(seed: number) {
    this.rand = mulberry32(seed);
  }

  weight(name: string, dims: number[], std: number, fill = 0): string {
    this.initializer.push({ name, dims, dataType: FLOAT, rawData: new Uint8Array(this.values(dims, std, fill).buffer) });
    return name;
  }

  /**
   * The values `weight` would draw, stored as quantize_dynamic stores a tensor with one scale: INT8
   * (MatMul weights) symmetric in ±127 with zero point 0, UINT8 (Gather tables) over [min(x, 0),
   * max(x, 0)]. Returns the names of the data, the scale and the zero point.
   */
  quantizedWeight(name: string, dims: number[], std: number, dataType: typeof INT8 | typeof UINT8): [string, string, string] {
    const values = this.values(dims, std, 0);
    let lo = 0;
    let hi = 0;
    for (const v of values) {
      if (v < lo) lo = v;
      if (v > hi) hi = v;
    }
    const signed = dataType === INT8;
    if (signed) [lo, hi] = [-Math.max(-lo, hi), Math.max(-lo, hi)];
    const [qmin, qmax] = signed ? [-127, 127] : [0, 255];
    const scale = Math.fround((hi - lo) / (qmax - qmin));
    const zeroPoint = Math.round(qmin - lo / scale);
    const data = signed ? new Int8Array(values.length) : new Uint8Array(values.length);
    for (let i = 0; i < values.length; i++) data[i] = Math.min(qmax, Math.max(qmin, Math.round(values[i] / scale) + zeroPoint));
    const zero = signed ? new Uint8Array(Int8Array.of(zeroPoint).buffer) : Uint8Array.of(zeroPoint);
    this.initializer.push(
      { name: `${name}_quantized`, dims, dataType, rawData: new Uint8Array(data.buffer) },
      { name: `${name}_scale`, dims: [], dataType: FLOAT, floatData: [scale] },
      { name: `${name}_zero_point`, dims: [], dataType, rawData: zero },
    );
    return [`${name}_quantized`, `${name}_scale`, `${name}_zero_point`];
  }

  floatScalar(value: number): string {
    return this.constant(`f_${value}`, () => ({ dims: [], dataType: FLOAT, floatData: [value] }));
  }

  int64s(values: number[]): string {
    return this.constant(`i_${values.join('_')}`, () => ({ dims: [values.length], dataType: INT64, int64Data: values }));
  }

  op(opType: string, input: string[], attrs: Record<string, number | number[]> = {}, output = `${opType.toLowerCase()}_${this.node.length}`): string {
    const attribute = Object.entries(attrs).map(([name, v]): OnnxTypes.IAttributeProto => {
      if (Array.isArray(v)) return { name, type: INTS, ints: v };
      return Number.isInteger(v) ? { name, type: INT, i: v } : { name, type: FLOAT_ATTR, f: v };
    });
    this.node.push({ opType, input, output: [output], name: output, attribute });
    return output;
  }

  /** An op of several outputs, named `<node>_<i>` (DynamicQuantizeLinear: data, scale, zero point). */
  opOutputs(opType: string, input: string[], outputs: number): string[] {
    const name = `${opType.toLowerCase()}_${this.node.length}`;
    const output = Array.from({ length: outputs }, (_, i) => `${name}_${i}`);
    this.node.push({ opType, input, output, name, attribute: [] });
    return output;
  }

  /** Normal(0, std) by Box–Muller, or `fill` when std is 0 (biases, LayerNorm gamma/beta): fp32 and int8 models of a seed draw alike. */
  private values(dims: number[], std: number, fill: number): Float32Array {
    const data = new Float32Array(dims.reduce((a, b) => a * b, 1));
    if (std === 0) data.fill(fill);
    else
      for (let i = 0; i < data.length; i += 2) {
        const r = Math.sqrt(-2 * Math.log(1 - this.rand())) * std;
        const t = 2 * Math.PI * this.rand();
        data[i] = r * Math.cos(t);
        if (i + 1 < data.length) data[i + 1] = r * Math.sin(t);
      }
    return data;
  }

  private constant(key: string, make: () => OnnxTypes.ITensorProto): string {
    let name = this.constants.get(key);
    if (!name) {
      name = `const_${this.constants.size}`;
      this.constants.set(key, name);
      this.initializer.push({ ...make(), name });
    }
    return name;
  }
}

function valueInfo(name: string, elemType: number, dims: (number | string)[]): OnnxTypes.IValueInfoProto {
  return { name, type: { tensorType: { elemType, shape: { dim: dims.map((d) => (typeof d === 'number' ? { dimValue: d } : { dimParam: d })) } } } };
}

/** Serialised ONNX bytes (IR 8) of the encoder with seeded random weights. */
export function miniLmShapeModelBytes(
  seed = 42,
  { fusedAttention = false, int8 = false, crossEncoder = false }: Pick<MiniLmShapeOptions, 'fusedAttention' | 'int8'> & { crossEncoder?: boolean } = {},
): Uint8Array {
  const { vocab, hidden, layers, heads, intermediate, maxPositions, tokenTypes, layerNormEps } = MINILM_ARCHITECTURE;
  const headSize = hidden / heads;
  const opset = fusedAttention ? 12 : 17;
  const g = new GraphBuilder(seed);
  const layerNorm = (x: string, prefix: string, output?: string) => {
    const gamma = g.weight(`${prefix}.weight`, [hidden], 0, 1);
    const beta = g.weight(`${prefix}.bias`, [hidden], 0);
    if (opset >= 17) return g.op('LayerNormalization', [x, gamma, beta], { axis: -1, epsilon: layerNormEps }, output);
    // Before opset 17 it is exported as arithmetic, which ONNX Runtime fuses back into one node.
    const centred = g.op('Sub', [x, g.op('ReduceMean', [x], { axes: [-1] })]);
    const variance = g.op('ReduceMean', [g.op('Pow', [centred, g.floatScalar(2)])], { axes: [-1] });
    const normalised = g.op('Div', [centred, g.op('Sqrt', [g.op('Add', [variance, g.floatScalar(layerNormEps)])])]);
    return g.op('Add', [g.op('Mul', [normalised, gamma]), beta], {}, output);
  };
  // Unsqueeze took its axes as an attribute before opset 13.
  const unsqueeze = (x: string, axis: number) => (opset >= 13 ? g.op('Unsqueeze', [x, g.int64s([axis])]) : g.op('Unsqueeze', [x], { axes: [axis] }));
  // quantize_dynamic quantises an activation once for all the MatMuls that read it (Q, K and V share one).
  const quantized = new Map<string, string[]>();
  const matmul = (x: string, prefix: string, inDim: number, outDim: number) => {
    if (!int8) return g.op('MatMul', [x, g.weight(`${prefix}.weight`, [inDim, outDim], INIT_STD)]);
    const [w, wScale, wZero] = g.quantizedWeight(`${prefix}.weight`, [inDim, outDim], INIT_STD, INT8);
    let xq = quantized.get(x);
    if (!xq) quantized.set(x, (xq = g.opOutputs('DynamicQuantizeLinear', [x], 3)));
    const [xData, xScale, xZero] = xq;
    const product = g.op('Cast', [g.op('MatMulInteger', [xData, w, xZero, wZero])], { to: FLOAT });
    return g.op('Mul', [product, g.op('Mul', [xScale, wScale])]);
  };
  const linear = (x: string, prefix: string, inDim: number, outDim: number) => g.op('Add', [matmul(x, prefix, inDim, outDim), g.weight(`${prefix}.bias`, [outDim], 0)]);

  // Embeddings: word + position (the first seq rows) + token type, then LayerNorm. quantize_dynamic
  // stores each table uint8 and dequantizes the rows Gather picks; the position rows are sliced alike.
  const embedding = (name: string, rows: number, pick: (table: string) => string) => {
    if (!int8) return pick(g.weight(name, [rows, hidden], INIT_STD));
    const [table, scale, zero] = g.quantizedWeight(name, [rows, hidden], INIT_STD, UINT8);
    return g.op('DequantizeLinear', [pick(table), scale, zero]);
  };
  const gather = (ids: string) => (table: string) => g.op('Gather', [table, ids], { axis: 0 });
  const seqLen = g.op('Slice', [g.op('Shape', ['input_ids']), g.int64s([1]), g.int64s([2]), g.int64s([0])]);
  const positions = embedding('embeddings.position_embeddings.weight', maxPositions, (table) => g.op('Slice', [table, g.int64s([0]), seqLen, g.int64s([0])]));
  const words = embedding('embeddings.word_embeddings.weight', vocab, gather('input_ids'));
  const types = embedding('embeddings.token_type_embeddings.weight', tokenTypes, gather('token_type_ids'));
  let x = layerNorm(g.op('Add', [g.op('Add', [words, types]), positions]), 'embeddings.LayerNorm');

  // (1 - mask) * large negative, [batch, 1, 1, seq]: transformers used -10000, now float32 min.
  const mask4d = g.op('Cast', [unsqueeze(unsqueeze('attention_mask', 1), 2)], { to: FLOAT });
  const maskBias = g.op('Mul', [g.op('Sub', [g.floatScalar(1), mask4d]), g.floatScalar(fusedAttention ? -10000 : -3.4028234663852886e38)]);

  const headShape = g.int64s([0, 0, heads, headSize]);
  for (let l = 0; l < layers; l++) {
    const p = `encoder.layer.${l}`;
    const split = (name: string, perm: number[]) => g.op('Transpose', [g.op('Reshape', [linear(x, `${p}.attention.self.${name}`, hidden, hidden), headShape])], { perm });
    const q = split('query', [0, 2, 1, 3]);
    const k = split('key', [0, 2, 3, 1]);
    const v = split('value', [0, 2, 1, 3]);
    const scores = g.op('Add', [g.op('Div', [g.op('MatMul', [q, k]), g.floatScalar(Math.sqrt(headSize))]), maskBias]);
    const context = g.op('MatMul', [g.op('Softmax', [scores], { axis: 3 }), v]);
    const merged = g.op('Reshape', [g.op('Transpose', [context], { perm: [0, 2, 1, 3] }), g.int64s([0, 0, hidden])]);
    const attended = layerNorm(g.op('Add', [linear(merged, `${p}.attention.output.dense`, hidden, hidden), x]), `${p}.attention.output.LayerNorm`);
    // GELU as BERT exports it: x * 0.5 * (1 + erf(x / sqrt 2)).
    const h = linear(attended, `${p}.intermediate.dense`, hidden, intermediate);
    const gelu = g.op('Mul', [g.op('Mul', [h, g.op('Add', [g.op('Erf', [g.op('Div', [h, g.floatScalar(Math.SQRT2)])]), g.floatScalar(1)])]), g.floatScalar(0.5)]);
    x = layerNorm(g.op('Add', [linear(gelu, `${p}.output.dense`, intermediate, hidden), attended]), `${p}.output.LayerNorm`, l === layers - 1 ? 'last_hidden_state' : undefined);
  }

  // crossEncoder: BertForSequenceClassification's head, as ms-marco-MiniLM-L-6-v2 has it: the [CLS] row, pooler (dense + tanh), classifier to one logit.
  if (crossEncoder) {
    const cls = g.op('Reshape', [g.op('Gather', ['last_hidden_state', g.int64s([0])], { axis: 1 }), g.int64s([0, hidden])]);
    const pooled = g.op('Tanh', [linear(cls, 'bert.pooler.dense', hidden, hidden)]);
    g.op('Add', [matmul(pooled, 'classifier', hidden, 1), g.weight('classifier.bias', [1], 0)], {}, 'logits');
  }
  const graph: OnnxTypes.IGraphProto = {
    name: `${int8 ? 'minilm_shape_int8_random' : 'minilm_shape_random'}${crossEncoder ? '_cross_encoder' : ''}`,
    node: g.node,
    initializer: g.initializer,
    input: ['input_ids', 'attention_mask', 'token_type_ids'].map((name) => valueInfo(name, INT64, ['batch_size', 'sequence_length'])),
    output: [crossEncoder ? valueInfo('logits', FLOAT, ['batch_size', 1]) : valueInfo('last_hidden_state', FLOAT, ['batch_size', 'sequence_length', hidden])],
  };
  return onnx.ModelProto.encode(onnx.ModelProto.create({ irVersion: 8, opsetImport: [{ domain: '', version: opset }], producerName: 'hearth-bench', graph })).finish();
}

/**
 * Writes the model into `${modelDir}/embeddings/<id>/` through the product's installer (copy,
 * sha256, probe, manifest), with the real tokenizer and config, and marks it ACTIVE by default.
 */
export async function installMiniLmShapeModel(modelDir: string, options: MiniLmShapeOptions = {}): Promise<EmbeddingManifest> {
  const id = options.id ?? (options.int8 ? MINILM_SHAPE_INT8_MODEL_ID : MINILM_SHAPE_MODEL_ID);
  const seed = options.seed ?? 42;
  const build = path.join(modelsRoot(modelDir, 'embedding'), `.build-${id}-${randomBytes(4).toString('hex')}`);
  await mkdir(build, { recursive: true });
  try {
    const model = path.join(build, 'model.onnx');
    await writeFile(model, miniLmShapeModelBytes(seed, options));
    return await installModel({
      modelDir,
      id,
      files: {
        model,
        tokenizer: path.join(TOKENIZER_DIR, 'tokenizer.json'),
        tokenizer_config: path.join(TOKENIZER_DIR, 'tokenizer_config.json'),
        config: path.join(TOKENIZER_DIR, 'config.json'),
      },
      source: 'built:bench/minilm-shape-model.ts',
      name: `all-MiniLM-L6-v2 architecture, random weights (${options.int8 ? 'int8 quantised' : 'fp32'}, 384 dimensions; benchmark only)`,
      licence: 'Apache-2.0 (tokenizer); random weights, benchmark only',
      method:
        `BERT encoder of all-MiniLM-L6-v2's shape (${options.fusedAttention ? 'opset 12, fusable attention' : 'opset 17'}), weights normal(0, ${INIT_STD}) from seed ${seed}` +
        (options.int8 ? ', quantised as quantize_dynamic does (int8 MatMul weights, uint8 embedding tables, one scale per tensor)' : ''),
      maxTokens: options.maxTokens ?? 256,
      activate: options.activate,
    });
  } finally {
    await rm(build, { recursive: true, force: true });
  }
}
