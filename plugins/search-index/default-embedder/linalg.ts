/**
 * Deterministic numerics for the static embedding build: a seeded PRNG, a CSR sparse matrix and a
 * randomized truncated SVD (Halko, Martinsson & Tropp 2011: range finder with power iterations,
 * then an exact eigen-decomposition of the small projected Gram matrix by cyclic Jacobi).
 * Single-threaded with fixed loop orders: the same input gives bit-identical output.
 */

/** mulberry32: small, fast, deterministic. Returns floats in [0, 1). */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** FNV-1a 32-bit hash of a string (UTF-16 code units): seeds per-n-gram vectors. */
export function fnv1a(text: string, seed = 0x811c9dc5): number {
  let h = seed >>> 0;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}

/** Compressed sparse rows: row r holds columns cols[ptr[r]..ptr[r+1]) with values vals[…]. */
export interface Csr {
  rows: number;
  cols: number;
  ptr: Int32Array;
  idx: Int32Array;
  vals: Float32Array;
}

/** Y (rows × l, row-major) = A · X (cols × l, row-major). */
function multiply(a: Csr, x: Float64Array, l: number): Float64Array {
  const y = new Float64Array(a.rows * l);
  for (let r = 0; r < a.rows; r++) {
    const yo = r * l;
    for (let p = a.ptr[r]; p < a.ptr[r + 1]; p++) {
      const v = a.vals[p];
      const xo = a.idx[p] * l;
      for (let j = 0; j < l; j++) y[yo + j] += v * x[xo + j];
    }
  }
  return y;
}

/** Z (cols × l, row-major) = Aᵀ · Y (rows × l, row-major). */
function multiplyTransposed(a: Csr, y: Float64Array, l: number): Float64Array {
  const z = new Float64Array(a.cols * l);
  for (let r = 0; r < a.rows; r++) {
    const yo = r * l;
    for (let p = a.ptr[r]; p < a.ptr[r + 1]; p++) {
      const v = a.vals[p];
      const zo = a.idx[p] * l;
      for (let j = 0; j < l; j++) z[zo + j] += v * y[yo + j];
    }
  }
  return z;
}

/** Orthonormalises the columns of a row-major m × l matrix in place (modified Gram-Schmidt, twice). */
function orthonormalise(y: Float64Array, m: number, l: number): void {
  // Column-major copy: each Gram-Schmidt step walks contiguous memory.
  const cols: Float64Array[] = [];
  for (let j = 0; j < l; j++) {
    const c = new Float64Array(m);
    for (let i = 0; i < m; i++) c[i] = y[i * l + j];
    cols.push(c);
  }
  for (let pass = 0; pass < 2; pass++) {
    for (let j = 0; j < l; j++) {
      const cj = cols[j];
      for (let k = 0; k < j; k++) {
        const ck = cols[k];
        let dot = 0;
        for (let i = 0; i < m; i++) dot += ck[i] * cj[i];
        for (let i = 0; i < m; i++) cj[i] -= dot * ck[i];
      }
      let norm = 0;
      for (let i = 0; i < m; i++) norm += cj[i] * cj[i];
      norm = Math.sqrt(norm);
      const inv = norm > 1e-300 ? 1 / norm : 0;
      for (let i = 0; i < m; i++) cj[i] *= inv;
    }
  }
  for (let j = 0; j < l; j++) {
    const c = cols[j];
    for (let i = 0; i < m; i++) y[i * l + j] = c[i];
  }
}

/** Eigen-decomposition of a symmetric n × n matrix (row-major) by cyclic Jacobi; eigenvalues descending. */
function symmetricEigen(input: Float64Array, n: number): { values: Float64Array; vectors: Float64Array } {
  const a = Float64Array.from(input);
  const v = new Float64Array(n * n);
  for (let i = 0; i < n; i++) v[i * n + i] = 1;
  for (let sweep = 0; sweep < 60; sweep++) {
    let off = 0;
    for (let p = 0; p < n; p++) for (let q = p + 1; q < n; q++) off += a[p * n + q] * a[p * n + q];
    if (off < 1e-22) break;
    for (let p = 0; p < n; p++) {
      for (let q = p + 1; q < n; q++) {
        const apq = a[p * n + q];
        if (Math.abs(apq) < 1e-300) continue;
        const theta = (a[q * n + q] - a[p * n + p]) / (2 * apq);
        const t = Math.sign(theta || 1) / (Math.abs(theta) + Math.sqrt(theta * theta + 1));
        const c = 1 / Math.sqrt(t * t + 1);
        const s = t * c;
        for (let k = 0; k < n; k++) {
          const akp = a[k * n + p];
          const akq = a[k * n + q];
          a[k * n + p] = c * akp - s * akq;
          a[k * n + q] = s * akp + c * akq;
        }
        for (let k = 0; k < n; k++) {
          const apk = a[p * n + k];
          const aqk = a[q * n + k];
          a[p * n + k] = c * apk - s * aqk;
          a[q * n + k] = s * apk + c * aqk;
        }
        for (let k = 0; k < n; k++) {
          const vkp = v[k * n + p];
          const vkq = v[k * n + q];
          v[k * n + p] = c * vkp - s * vkq;
          v[k * n + q] = s * vkp + c * vkq;
        }
      }
    }
  }
  const order = Array.from({ length: n }, (_, i) => i).sort((x, y) => a[y * n + y] - a[x * n + x] || x - y);
  const values = new Float64Array(n);
  const vectors = new Float64Array(n * n);
  order.forEach((src, dst) => {
    values[dst] = a[src * n + src];
    for (let k = 0; k < n; k++) vectors[k * n + dst] = v[k * n + src];
  });
  return { values, vectors };
}

interface SvdOptions {
  rank: number;
  oversample?: number;
  powerIterations?: number;
  seed?: number;
  progress?: (step: string) => void;
}

/**
 * Truncated SVD of A: returns U (rows × rank, row-major) and the singular values. Randomized range
 * finder Q ≈ range(A), then B = QᵀA; BBᵀ = (AᵀQ)ᵀ(AᵀQ) is only l × l, its eigenvectors rotate Q into U.
 */
export function randomizedSvd(a: Csr, opts: SvdOptions): { u: Float64Array; singular: Float64Array } {
  const k = Math.min(opts.rank, a.rows, a.cols);
  const l = Math.min(k + (opts.oversample ?? 16), a.rows, a.cols);
  const rand = mulberry32(opts.seed ?? 1);
  const omega = new Float64Array(a.cols * l);
  for (let i = 0; i < omega.length; i++) omega[i] = rand() * 2 - 1;
  let y = multiply(a, omega, l);
  orthonormalise(y, a.rows, l);
  opts.progress?.('range found');
  for (let it = 0; it < (opts.powerIterations ?? 2); it++) {
    y = multiply(a, multiplyTransposed(a, y, l), l);
    orthonormalise(y, a.rows, l);
    opts.progress?.(`power iteration ${it + 1}`);
  }
  const z = multiplyTransposed(a, y, l); // Bᵀ (cols × l)
  const gram = new Float64Array(l * l);
  for (let c = 0; c < a.cols; c++) {
    const o = c * l;
    for (let i = 0; i < l; i++) {
      const zi = z[o + i];
      if (zi === 0) continue;
      for (let j = i; j < l; j++) gram[i * l + j] += zi * z[o + j];
    }
  }
  for (let i = 0; i < l; i++) for (let j = 0; j < i; j++) gram[i * l + j] = gram[j * l + i];
  const { values, vectors } = symmetricEigen(gram, l);
  const u = new Float64Array(a.rows * k);
  for (let r = 0; r < a.rows; r++) {
    for (let j = 0; j < k; j++) {
      let s = 0;
      for (let i = 0; i < l; i++) s += y[r * l + i] * vectors[i * l + j];
      u[r * k + j] = s;
    }
  }
  const singular = new Float64Array(k);
  for (let j = 0; j < k; j++) singular[j] = Math.sqrt(Math.max(0, values[j]));
  return { u, singular };
}
