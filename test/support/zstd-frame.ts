// zstd bodies for tests on any Node: zlib's own encoder where this Node has one (22.15+), else a
// frame of one raw block (valid zstd any decoder reads, made without zlib's zstd).
import zlib from 'node:zlib';

type Sync = (data: Buffer) => Buffer;
const zlibZstd = zlib as unknown as { zstdCompressSync?: Sync; zstdDecompressSync?: Sync };

/** Whether this Node's zlib decodes zstd: what Relay's decoders feature-detect. */
export const NODE_HAS_ZSTD = typeof zlibZstd.zstdDecompressSync === 'function';

/** A zstd frame of one raw block (a block holds at most 128 KB). */
export function zstdRaw(data: Buffer): Buffer {
  const head = Buffer.alloc(12);
  head.writeUInt32LE(0xfd2fb528, 0); // magic number
  head[4] = 0xa0; // a single segment, its 4-byte content size follows
  head.writeUInt32LE(data.length, 5);
  head.writeUIntLE(1 | (data.length << 3), 9, 3); // last block, raw, its size
  return Buffer.concat([head, data]);
}

/** `data` as zstd: compressed by zlib where it can, else stored raw. */
export function zstd(data: Buffer | string): Buffer {
  const bytes = Buffer.from(data);
  return zlibZstd.zstdCompressSync ? zlibZstd.zstdCompressSync(bytes) : zstdRaw(bytes);
}
