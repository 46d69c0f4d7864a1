import { describe, expect, it } from 'vitest';
import { readTokenTable } from './safetensors.js';

/** A safetensors file built by hand: u64 LE header length, JSON header, raw bytes. */
function safetensors(tensors: Record<string, { dtype: string; shape: number[]; bytes: Buffer }>): Buffer {
  let offset = 0;
  const header: Record<string, unknown> = { __metadata__: { format: 'pt' } };
  for (const [name, t] of Object.entries(tensors)) {
    header[name] = { dtype: t.dtype, shape: t.shape, data_offsets: [offset, offset + t.bytes.length] };
    offset += t.bytes.length;
  }
  const json = Buffer.from(JSON.stringify(header));
  const length = Buffer.alloc(8);
  length.writeBigUInt64LE(BigInt(json.length));
  return Buffer.concat([length, json, ...Object.values(tensors).map((t) => t.bytes)]);
}

describe('readTokenTable', () => {
  it('reads F32 rows as they are', () => {
    const bytes = Buffer.alloc(4 * 4);
    [0.5, -1.25, 3, 1e-3].forEach((v, i) => bytes.writeFloatLE(v, i * 4));
    const table = readTokenTable(safetensors({ embeddings: { dtype: 'F32', shape: [2, 2], bytes } }), 'embeddings');
    expect(table).toMatchObject({ rows: 2, dimension: 2, dtype: 'F32' });
    expect(Array.from(table.data)).toEqual([0.5, -1.25, 3, Math.fround(1e-3)]);
  });

  it('widens F16 (normal, subnormal, negative) to float', () => {
    const halves = [0x3c00, 0xc000, 0x3555, 0x0001]; // 1, -2, 0.33325, 2^-24
    const bytes = Buffer.alloc(8);
    halves.forEach((h, i) => bytes.writeUInt16LE(h, i * 2));
    const table = readTokenTable(safetensors({ embeddings: { dtype: 'F16', shape: [1, 4], bytes } }), 'embeddings');
    expect(Array.from(table.data)).toEqual([1, -2, Math.fround(0.333251953125), Math.fround(2 ** -24)]);
  });

  it('keeps I8 as bytes and finds the tensor after others', () => {
    const table = readTokenTable(
      safetensors({ other: { dtype: 'F32', shape: [1, 1], bytes: Buffer.alloc(4) }, embeddings: { dtype: 'I8', shape: [1, 3], bytes: Buffer.from([1, 255, 127]) } }),
      'embeddings',
    );
    expect(table.data).toBeInstanceOf(Int8Array);
    expect(Array.from(table.data)).toEqual([1, -1, 127]);
  });

  it('refuses what it cannot read, naming why', () => {
    expect(() => readTokenTable(Buffer.from('short'), 'embeddings')).toThrow(/not a safetensors file/);
    expect(() => readTokenTable(safetensors({ weights: { dtype: 'F32', shape: [1, 1], bytes: Buffer.alloc(4) } }), 'embeddings')).toThrow(/no tensor "embeddings" .*weights/);
    expect(() => readTokenTable(safetensors({ embeddings: { dtype: 'BF16', shape: [1, 2], bytes: Buffer.alloc(4) } }), 'embeddings')).toThrow(/BF16; only I8, F16 and F32/);
    expect(() => readTokenTable(safetensors({ embeddings: { dtype: 'F32', shape: [4], bytes: Buffer.alloc(16) } }), 'embeddings')).toThrow(/expected \[tokens, dimension\]/);
    expect(() => readTokenTable(safetensors({ embeddings: { dtype: 'F32', shape: [2, 2], bytes: Buffer.alloc(12) } }), 'embeddings')).toThrow(/does not hold \[2, 2\] F32/);
  });
});
