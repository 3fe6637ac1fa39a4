import { createHash, randomBytes } from 'node:crypto';
import {
  closeSync,
  constants,
  fstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readSync,
  renameSync,
  statSync,
  unlinkSync,
  writeSync,
} from 'node:fs';
import { endianness } from 'node:os';
import { basename, dirname, join } from 'node:path';

/**
 * A cache file of tack's own: one kind of data (a docs folder's index, a knowledge bundle's parsed files, a tool
 * catalog's tokens) in typed-array and JSON sections, behind a header that says what it is and a SHA-256 of the
 * rest. A cache is only ever a shortcut: whatever is wrong with the file (missing, another program's, another
 * version's, cut short, one byte flipped, too large) is a `CacheMiss` with the reason, and the caller rebuilds.
 * Nothing is parsed before the checksum has matched, and the caller still checks the shape of what it gets.
 *
 * Layout: `tack-idx` (8 bytes), the container version (u32), the header's length (u32), the header (JSON:
 * kind, kind version, byte order, sections, payload size, SHA-256), zero padding to 8 bytes, then the payload:
 * each section at an 8-byte boundary, so a typed array is a view of the file's buffer, not a copy.
 *
 * Writes go to a temporary file in the same folder, renamed over the old one: a reader sees the old file or the
 * new one, never half of one, and two processes writing at once each rename a whole file (the last one stays).
 * There is no fsync: a file cut short by a power loss fails its checksum and is rebuilt, which is all a cache needs.
 */

const MAGIC = Buffer.from('tack-idx', 'latin1');
const CONTAINER_VERSION = 1;
const PREAMBLE = MAGIC.length + 8;
/** A header is a few hundred bytes; anything much larger is not one of ours. */
const MAX_HEADER_BYTES = 64 * 1024;
/** Default cap on a cache file read back; a larger file is rebuilt rather than read into memory. */
export const DEFAULT_MAX_CACHE_BYTES = 2 ** 30;
/** Temporary files older than this were left by a writer that died; the next write removes them. */
const STALE_TEMP_MS = 60 * 60 * 1000;

export type CacheSection = Uint8Array | Uint32Array | Float64Array | { json: unknown };

type SectionType = 'u8' | 'u32' | 'f64' | 'json';

interface SectionEntry {
  name: string;
  type: SectionType;
  /** From the start of the payload; a multiple of 8. */
  offset: number;
  bytes: number;
}

interface Header {
  kind: string;
  version: number;
  endian: 'LE' | 'BE';
  payloadBytes: number;
  sha256: string;
  sections: SectionEntry[];
}

export interface CacheHit {
  ok: true;
  /** Typed arrays are views of one buffer holding the file; JSON sections are parsed (`unknown`: check them). */
  sections: Map<string, Uint8Array | Uint32Array | Float64Array | { json: unknown }>;
  bytes: number;
}

/**
 * Why a cache file was not used. `missing`: no file (the first run); `foreign`: not a tack cache file, or one of
 * another kind or byte order; `version`: written by a tack with another format; `corrupt`: cut short, checksum
 * or structure wrong; `too-large`: over the cap; `unreadable`: the file system refused.
 */
export interface CacheMiss {
  ok: false;
  reason: 'missing' | 'foreign' | 'version' | 'corrupt' | 'too-large' | 'unreadable';
  message: string;
}

export interface CacheWriteResult {
  ok: boolean;
  /** Why the file could not be written (the cache is then simply not kept). */
  message?: string;
  bytes?: number;
}

export interface ReadCacheOptions {
  kind: string;
  version: number;
  maxBytes?: number;
}

/** Reads and checks a cache file; never throws. */
export function readCacheFile(path: string, options: ReadCacheOptions): CacheHit | CacheMiss {
  let buffer: Buffer;
  try {
    const read = readWhole(path, options.maxBytes ?? DEFAULT_MAX_CACHE_BYTES);
    if (!read.ok) return read;
    buffer = read.buffer;
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return miss('missing', `${path} does not exist`);
    return miss('unreadable', `${path}: ${(error as Error).message}`);
  }
  if (buffer.length < PREAMBLE || !buffer.subarray(0, MAGIC.length).equals(MAGIC))
    return miss('foreign', `${path} is not a tack cache file`);
  const container = buffer.readUInt32LE(MAGIC.length);
  if (container !== CONTAINER_VERSION)
    return miss(
      'version',
      `${path} has container format ${container}, this tack writes ${CONTAINER_VERSION}`,
    );
  const headerBytes = buffer.readUInt32LE(MAGIC.length + 4);
  if (headerBytes > MAX_HEADER_BYTES || PREAMBLE + headerBytes > buffer.length)
    return miss('corrupt', `${path}: the header is cut short`);
  let header: Header;
  try {
    header = checkHeader(JSON.parse(buffer.toString('utf8', PREAMBLE, PREAMBLE + headerBytes)));
  } catch (error) {
    return miss('corrupt', `${path}: the header is unreadable (${(error as Error).message})`);
  }
  if (header.kind !== options.kind)
    return miss('foreign', `${path} holds a ${header.kind} cache, not a ${options.kind} one`);
  if (header.version !== options.version)
    return miss(
      'version',
      `${path} has ${header.kind} format ${header.version}, this tack reads ${options.version}`,
    );
  if (header.endian !== nativeEndian())
    return miss('foreign', `${path} was written on a machine of the other byte order`);
  const start = align8(PREAMBLE + headerBytes);
  if (start + header.payloadBytes !== buffer.length)
    return miss(
      'corrupt',
      `${path} is ${buffer.length} bytes, its header says ${start + header.payloadBytes}`,
    );
  const payload = buffer.subarray(start);
  if (createHash('sha256').update(payload).digest('hex') !== header.sha256)
    return miss('corrupt', `${path}: the checksum does not match (the file was changed or cut short)`);
  const sections: CacheHit['sections'] = new Map();
  for (const section of header.sections) {
    const at = payload.byteOffset + section.offset;
    try {
      if (section.type === 'json')
        sections.set(section.name, {
          json: JSON.parse(payload.toString('utf8', section.offset, section.offset + section.bytes)),
        });
      else if (section.type === 'u8')
        sections.set(section.name, new Uint8Array(payload.buffer, at, section.bytes));
      else if (section.type === 'u32')
        sections.set(section.name, new Uint32Array(payload.buffer, at, section.bytes / 4));
      else sections.set(section.name, new Float64Array(payload.buffer, at, section.bytes / 8));
    } catch (error) {
      return miss('corrupt', `${path}: section ${section.name} is unreadable (${(error as Error).message})`);
    }
  }
  return { ok: true, sections, bytes: buffer.length };
}

/**
 * Writes a cache file atomically (a temporary file renamed over `path`), creating its folder. Never throws: a
 * cache that cannot be written is reported and the caller goes on without it.
 */
export function writeCacheFile(
  path: string,
  kind: string,
  version: number,
  sections: Readonly<Record<string, CacheSection>>,
): CacheWriteResult {
  const temp = `${path}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`;
  let fd: number | undefined;
  try {
    const chunks: Uint8Array[] = [];
    const entries: SectionEntry[] = [];
    let offset = 0;
    for (const [name, section] of Object.entries(sections)) {
      const bytes = isTyped(section)
        ? new Uint8Array(section.buffer, section.byteOffset, section.byteLength)
        : Buffer.from(JSON.stringify(section.json) ?? 'null', 'utf8');
      const type: SectionType =
        section instanceof Uint32Array
          ? 'u32'
          : section instanceof Float64Array
            ? 'f64'
            : section instanceof Uint8Array
              ? 'u8'
              : 'json';
      entries.push({ name, type, offset, bytes: bytes.byteLength });
      chunks.push(bytes);
      const padding = align8(bytes.byteLength) - bytes.byteLength;
      if (padding > 0) chunks.push(new Uint8Array(padding));
      offset += bytes.byteLength + padding;
    }
    const hash = createHash('sha256');
    for (const chunk of chunks) hash.update(chunk);
    const header: Header = {
      kind,
      version,
      endian: nativeEndian(),
      payloadBytes: offset,
      sha256: hash.digest('hex'),
      sections: entries,
    };
    const headerText = Buffer.from(JSON.stringify(header), 'utf8');
    const preamble = Buffer.alloc(PREAMBLE);
    MAGIC.copy(preamble);
    preamble.writeUInt32LE(CONTAINER_VERSION, MAGIC.length);
    preamble.writeUInt32LE(headerText.length, MAGIC.length + 4);
    const headerPadding = new Uint8Array(align8(PREAMBLE + headerText.length) - PREAMBLE - headerText.length);
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    // `wx`: a name taken by anything else (a link planted in the folder) is an error, not a file written through.
    fd = openSync(temp, 'wx', 0o600);
    let total = 0;
    for (const chunk of [preamble, headerText, headerPadding, ...chunks]) total += writeAll(fd, chunk);
    closeSync(fd);
    fd = undefined;
    renameSync(temp, path);
    sweepTemps(path);
    return { ok: true, bytes: total };
  } catch (error) {
    if (fd !== undefined) closeSync(fd);
    try {
      unlinkSync(temp);
    } catch {}
    return { ok: false, message: `cannot write ${path}: ${(error as Error).message}` };
  }
}

function readWhole(path: string, maxBytes: number): { ok: true; buffer: Buffer } | CacheMiss {
  // Non-blocking: a FIFO planted at the path must not hang the reader.
  const fd = openSync(path, constants.O_RDONLY | (constants.O_NONBLOCK ?? 0));
  try {
    const info = fstatSync(fd);
    if (!info.isFile()) return miss('foreign', `${path} is not a regular file`);
    if (info.size > maxBytes)
      return miss(
        'too-large',
        `${path} is ${info.size} bytes, over the ${maxBytes}-byte cap on a cache file`,
      );
    // Its own ArrayBuffer at offset 0, so that 8-byte aligned sections give aligned typed-array views.
    const buffer = Buffer.allocUnsafeSlow(info.size);
    let read = 0;
    while (read < info.size) {
      const n = readSync(fd, buffer, read, info.size - read, read);
      if (n === 0) break;
      read += n;
    }
    return { ok: true, buffer: read === info.size ? buffer : buffer.subarray(0, read) };
  } finally {
    closeSync(fd);
  }
}

function isTyped(section: CacheSection): section is Uint8Array | Uint32Array | Float64Array {
  return ArrayBuffer.isView(section);
}

function writeAll(fd: number, chunk: Uint8Array): number {
  let written = 0;
  while (written < chunk.byteLength) written += writeSync(fd, chunk, written, chunk.byteLength - written);
  return written;
}

/** Temporary files of this cache file left by writers that died before their rename. */
function sweepTemps(path: string): void {
  const dir = dirname(path);
  const prefix = `${basename(path)}.`;
  const now = Date.now();
  try {
    for (const name of readdirSync(dir)) {
      if (!name.startsWith(prefix) || !name.endsWith('.tmp')) continue;
      try {
        if (now - statSync(join(dir, name)).mtimeMs > STALE_TEMP_MS) unlinkSync(join(dir, name));
      } catch {}
    }
  } catch {}
}

function checkHeader(value: unknown): Header {
  const h = value as Partial<Header>;
  const isCount = (n: unknown): n is number => typeof n === 'number' && Number.isSafeInteger(n) && n >= 0;
  if (
    typeof h !== 'object' ||
    h === null ||
    typeof h.kind !== 'string' ||
    !isCount(h.version) ||
    (h.endian !== 'LE' && h.endian !== 'BE') ||
    !isCount(h.payloadBytes) ||
    typeof h.sha256 !== 'string' ||
    !Array.isArray(h.sections)
  )
    throw new Error('not a cache header');
  const names = new Set<string>();
  for (const s of h.sections as Partial<SectionEntry>[]) {
    const size = s.type === 'u32' ? 4 : s.type === 'f64' ? 8 : 1;
    if (
      typeof s.name !== 'string' ||
      names.has(s.name) ||
      !['u8', 'u32', 'f64', 'json'].includes(s.type as string) ||
      !isCount(s.offset) ||
      !isCount(s.bytes) ||
      s.offset % 8 !== 0 ||
      s.bytes % size !== 0 ||
      s.offset + s.bytes > h.payloadBytes
    )
      throw new Error('a section entry is malformed');
    names.add(s.name);
  }
  return h as Header;
}

function miss(reason: CacheMiss['reason'], message: string): CacheMiss {
  return { ok: false, reason, message };
}

function nativeEndian(): 'LE' | 'BE' {
  return endianness();
}

function align8(n: number): number {
  return Math.ceil(n / 8) * 8;
}

/** The file name for a cache of `kind` keyed by `key` (a folder's real path, say): one file per thing cached. */
export function cacheFileName(kind: string, key: string): string {
  return `${kind}-${createHash('sha256').update(key).digest('hex').slice(0, 24)}.idx`;
}
