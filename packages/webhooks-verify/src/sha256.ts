/**
 * HMAC-SHA256 in plain JavaScript (FIPS 180-4, RFC 2104), for the one case
 * where no native synchronous HMAC exists: a synchronous `verify` or `sign`
 * in a browser or an edge worker. Node, Deno and Bun use `node:crypto`, and
 * every runtime's async path uses Web Crypto.
 *
 * The key's inner and outer padded blocks are hashed once per key, so each
 * message costs only its own blocks plus one block for the outer hash.
 */

const K = new Int32Array([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
  0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
  0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
  0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
  0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
  0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
  0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
  0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2
])

const initial = new Int32Array([
  0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a, 0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19
])

const blockSize = 64
const w = new Int32Array(64)

/** Runs the compression function over `count` whole blocks of `data` from `offset`. */
const compress = (state: Int32Array, data: Uint8Array, offset: number, count: number): void => {
  let h0 = state[0]!, h1 = state[1]!, h2 = state[2]!, h3 = state[3]!
  let h4 = state[4]!, h5 = state[5]!, h6 = state[6]!, h7 = state[7]!
  for (let block = 0; block < count; block++) {
    let p = offset + block * blockSize
    for (let t = 0; t < 16; t++, p += 4) {
      w[t] = (data[p]! << 24) | (data[p + 1]! << 16) | (data[p + 2]! << 8) | data[p + 3]!
    }
    for (let t = 16; t < 64; t++) {
      const a = w[t - 15]!
      const b = w[t - 2]!
      const s0 = ((a >>> 7) | (a << 25)) ^ ((a >>> 18) | (a << 14)) ^ (a >>> 3)
      const s1 = ((b >>> 17) | (b << 15)) ^ ((b >>> 19) | (b << 13)) ^ (b >>> 10)
      w[t] = (w[t - 16]! + s0 + w[t - 7]! + s1) | 0
    }
    let a = h0, b = h1, c = h2, d = h3, e = h4, f = h5, g = h6, h = h7
    for (let t = 0; t < 64; t++) {
      const S1 = ((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7))
      const ch = (e & f) ^ (~e & g)
      const t1 = (h + S1 + ch + K[t]! + w[t]!) | 0
      const S0 = ((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10))
      const maj = (a & b) ^ (a & c) ^ (b & c)
      const t2 = (S0 + maj) | 0
      h = g
      g = f
      f = e
      e = (d + t1) | 0
      d = c
      c = b
      b = a
      a = (t1 + t2) | 0
    }
    h0 = (h0 + a) | 0
    h1 = (h1 + b) | 0
    h2 = (h2 + c) | 0
    h3 = (h3 + d) | 0
    h4 = (h4 + e) | 0
    h5 = (h5 + f) | 0
    h6 = (h6 + g) | 0
    h7 = (h7 + h) | 0
  }
  state[0] = h0
  state[1] = h1
  state[2] = h2
  state[3] = h3
  state[4] = h4
  state[5] = h5
  state[6] = h6
  state[7] = h7
}

/** A running SHA-256 that has already absorbed `absorbed` bytes (a multiple of 64) into `state`. */
class Sha256 {
  private readonly state: Int32Array
  private readonly buffer = new Uint8Array(blockSize)
  private buffered = 0
  private length: number

  constructor(state: Int32Array, absorbed: number) {
    this.state = state.slice()
    this.length = absorbed
  }

  update(data: Uint8Array): this {
    let offset = 0
    this.length += data.length
    if (this.buffered > 0) {
      const take = Math.min(blockSize - this.buffered, data.length)
      this.buffer.set(data.subarray(0, take), this.buffered)
      this.buffered += take
      offset = take
      if (this.buffered < blockSize) return this
      compress(this.state, this.buffer, 0, 1)
      this.buffered = 0
    }
    const blocks = Math.floor((data.length - offset) / blockSize)
    if (blocks > 0) {
      compress(this.state, data, offset, blocks)
      offset += blocks * blockSize
    }
    if (offset < data.length) {
      this.buffer.set(data.subarray(offset), 0)
      this.buffered = data.length - offset
    }
    return this
  }

  digest(): Uint8Array {
    const bits = this.length * 8
    const buffer = this.buffer
    buffer[this.buffered++] = 0x80
    if (this.buffered > blockSize - 8) {
      buffer.fill(0, this.buffered)
      compress(this.state, buffer, 0, 1)
      this.buffered = 0
    }
    buffer.fill(0, this.buffered, blockSize - 8)
    const high = Math.floor(bits / 0x100000000)
    const low = bits >>> 0
    buffer[56] = high >>> 24
    buffer[57] = high >>> 16
    buffer[58] = high >>> 8
    buffer[59] = high
    buffer[60] = low >>> 24
    buffer[61] = low >>> 16
    buffer[62] = low >>> 8
    buffer[63] = low
    compress(this.state, buffer, 0, 1)
    const out = new Uint8Array(32)
    for (let i = 0; i < 8; i++) {
      const v = this.state[i]!
      out[i * 4] = v >>> 24
      out[i * 4 + 1] = v >>> 16
      out[i * 4 + 2] = v >>> 8
      out[i * 4 + 3] = v
    }
    return out
  }
}

export const sha256 = (data: Uint8Array): Uint8Array => new Sha256(initial, 0).update(data).digest()

/** A key with its inner and outer padded blocks already hashed. */
export interface HmacSha256Key {
  readonly inner: Int32Array
  readonly outer: Int32Array
}

export const prepareHmacSha256Key = (key: Uint8Array): HmacSha256Key => {
  const block = new Uint8Array(blockSize)
  block.set(key.length > blockSize ? sha256(key) : key)
  const inner = initial.slice()
  const outer = initial.slice()
  const pad = new Uint8Array(blockSize)
  for (let i = 0; i < blockSize; i++) pad[i] = block[i]! ^ 0x36
  compress(inner, pad, 0, 1)
  for (let i = 0; i < blockSize; i++) pad[i] = block[i]! ^ 0x5c
  compress(outer, pad, 0, 1)
  return { inner, outer }
}

/** HMAC-SHA256 of the concatenation of `parts`. */
export const hmacSha256 = (key: HmacSha256Key, parts: ReadonlyArray<Uint8Array>): Uint8Array => {
  const inner = new Sha256(key.inner, blockSize)
  for (const part of parts) inner.update(part)
  return new Sha256(key.outer, blockSize).update(inner.digest()).digest()
}
