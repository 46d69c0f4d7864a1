/**
 * The safetensors container, read by hand: an 8-byte little-endian header length, a JSON header naming
 * each tensor's dtype, shape and byte range, then the raw little-endian bytes. Only what a Model2Vec
 * token table needs (I8, F16, F32, 2-D) is accepted; anything else is refused with its name.
 */

export type TableDtype = 'I8' | 'F16' | 'F32';

/** A [rows, dimension] table, row-major; int8 keeps its bytes (a global scale cancels when the mean is normalised). */
export interface TokenTable {
  rows: number;
  dimension: number;
  dtype: TableDtype;
  data: Int8Array | Float32Array;
  /** The file's __metadata__ (string values). */
  metadata: Record<string, string>;
}

interface TensorEntry {
  dtype: string;
  shape: number[];
  data_offsets: [number, number];
}

const BYTES: Record<TableDtype, number> = { I8: 1, F16: 2, F32: 4 };
/** A header past this is not a token table's (and not worth parsing). */
const MAX_HEADER_BYTES = 16 * 1024 * 1024;

/** The JSON header and where the data section starts. */
export function readSafetensorsHeader(file: Buffer): { tensors: Record<string, TensorEntry>; metadata: Record<string, string>; dataStart: number } {
  if (file.length < 8) throw new Error('not a safetensors file (shorter than its header length)');
  const headerBytes = Number(file.readBigUInt64LE(0));
  if (headerBytes > MAX_HEADER_BYTES || 8 + headerBytes > file.length) throw new Error(`not a safetensors file (header length ${headerBytes})`);
  let header: Record<string, unknown>;
  try {
    header = JSON.parse(file.toString('utf8', 8, 8 + headerBytes));
  } catch {
    throw new Error('not a safetensors file (its header is not JSON)');
  }
  const { __metadata__: metadata, ...tensors } = header;
  return { tensors: tensors as Record<string, TensorEntry>, metadata: (metadata ?? {}) as Record<string, string>, dataStart: 8 + headerBytes };
}

/** IEEE half to float (Node 20 has no Float16Array). */
function halfToFloat(h: number): number {
  const sign = h & 0x8000 ? -1 : 1;
  const exponent = (h >> 10) & 0x1f;
  const fraction = h & 0x3ff;
  if (exponent === 0) return sign * 2 ** -14 * (fraction / 1024);
  if (exponent === 0x1f) return fraction ? NaN : sign * Infinity;
  return sign * 2 ** (exponent - 15) * (1 + fraction / 1024);
}

function decode(bytes: Buffer, dtype: TableDtype): Int8Array | Float32Array {
  // Copied out so the table does not pin the file's buffer, and is aligned for its type.
  if (dtype === 'I8') return new Int8Array(bytes);
  const count = bytes.length / BYTES[dtype];
  const out = new Float32Array(count);
  if (dtype === 'F32') for (let i = 0; i < count; i++) out[i] = bytes.readFloatLE(i * 4);
  else for (let i = 0; i < count; i++) out[i] = halfToFloat(bytes.readUInt16LE(i * 2));
  return out;
}

/** The 2-D tensor `name` of a safetensors file as a token table. */
export function readTokenTable(file: Buffer, name: string): TokenTable {
  const { tensors, metadata, dataStart } = readSafetensorsHeader(file);
  const entry = tensors[name];
  if (!entry) throw new Error(`no tensor "${name}" in the safetensors file (it has ${Object.keys(tensors).join(', ') || 'none'})`);
  const dtype = entry.dtype as TableDtype;
  if (!(dtype in BYTES)) throw new Error(`tensor "${name}" is ${entry.dtype}; only I8, F16 and F32 tables are supported`);
  const [rows, dimension] = entry.shape ?? [];
  if (entry.shape?.length !== 2 || !(rows > 0) || !(dimension > 0)) throw new Error(`tensor "${name}" has shape [${entry.shape}], expected [tokens, dimension]`);
  const [begin, end] = entry.data_offsets ?? [];
  if (!(begin >= 0) || end - begin !== rows * dimension * BYTES[dtype] || dataStart + end > file.length) {
    throw new Error(`tensor "${name}" byte range [${begin}, ${end}) does not hold [${rows}, ${dimension}] ${dtype} inside the file`);
  }
  return { rows, dimension, dtype, data: decode(file.subarray(dataStart + begin, dataStart + end), dtype), metadata };
}
