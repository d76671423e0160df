import { closeSync, fstatSync, lstatSync, openSync, readSync, statfsSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { errnoCode, LanewardError, toError } from '../../formats/codes/error.ts';

/**
 * Checks a state root's files before lmdb maps them. LMDB trusts its files: a data.mdb
 * that is not one of its environments, or is shorter than the pages its meta names, is
 * read through the map and faults (SIGSEGV, SIGBUS), and lmdb's binding frees its own
 * state twice when an open fails; either way the process dies with no line. So every
 * fact the open would trust is checked here first, from the file with plain reads:
 * both files regular (not a FIFO, directory, symlink or device), both meta pages of
 * data.mdb with LMDB's magic and data version and one page size, and the pages the
 * newest meta names inside the file. The fast path is three reads; only a file shorter
 * than its last page walks the trees (a valid file may end early on pages freed before
 * they were ever written). A writer may be rewriting a meta page while it is read, so a
 * failed check is read again before the root is refused.
 */
export function checkEnvironment(dir: string, options: { readOnly: boolean }): void {
  for (let attempt = 1; ; attempt++) {
    const found = inspect(dir, options.readOnly);
    if (found === null) return;
    if (found.code !== 'STATE_CORRUPT' || attempt >= CHECK_TRIES) throw found;
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 10 * attempt);
  }
}

/** How often a root that looks corrupt is read again (a writer may be mid-commit). */
const CHECK_TRIES = 3;
const MAGIC = 0xbeefc0de;
const DATA_VERSION = 2;
const HEADER = 24; // MDB_page_header: pgno, txnid, pad, flags, lower/upper
const META_BYTES = 168; // MDB_meta up to and with its boot id
const P_BRANCH = 0x01;
const P_LEAF = 0x02;
const P_OVERFLOW = 0x04;
const P_META = 0x08;
const P_LEAF2 = 0x20;
const F_BIGDATA = 0x01;
const F_SUBDATA = 0x02;
const NO_PAGE = 0xffffffffffffffffn;

interface Meta {
  readonly pageSize: number;
  readonly lastPage: bigint;
  readonly txnid: bigint;
  readonly freeRoot: bigint;
  readonly mainRoot: bigint;
}

function inspect(dir: string, readOnly: boolean): LanewardError | null {
  const data = join(dir, 'data.mdb');
  const lock = join(dir, 'lock.mdb');
  const dataKind = kindOf(data);
  if (dataKind instanceof LanewardError) return dataKind;
  const lockKind = kindOf(lock);
  if (lockKind instanceof LanewardError) return lockKind;
  if (dataKind === 'absent') {
    if (readOnly) return new LanewardError('STATE_UNAVAILABLE', 'the state root holds no state yet (no data.mdb), and a read-only open cannot create it', { path: dir });
    return roomForNew(dir);
  }
  let fd: number;
  try {
    fd = openSync(data, 'r');
  } catch (error) {
    return new LanewardError('STATE_UNAVAILABLE', `data.mdb cannot be read (${errnoCode(error) ?? toError(error).message})`, { path: data, cause: error });
  }
  try {
    return checkData(fd, data, readOnly);
  } catch (error) {
    return new LanewardError('STATE_UNAVAILABLE', `data.mdb cannot be read (${errnoCode(error) ?? toError(error).message})`, { path: data, cause: error });
  } finally {
    closeSync(fd);
  }
}

/**
 * What a new environment needs free before lmdb creates it: its lock file, two meta
 * pages and the first commits, with room to spare. LMDB maps both files; a page of a
 * mapped file the file system cannot back is a SIGBUS, and a create cut short by a full
 * disk leaves a data.mdb of one meta page, which the next open would refuse as truncated.
 */
export const NEW_ROOT_BYTES = 1024 * 1024;

function roomForNew(dir: string): LanewardError | null {
  let free: number;
  try {
    const stat = statfsSync(dir);
    free = stat.bavail * stat.bsize;
  } catch {
    return null; // no statfs here (a runtime without it): lmdb's own errors stand
  }
  if (free >= NEW_ROOT_BYTES) return null;
  return new LanewardError('STATE_UNAVAILABLE', `its file system has ${free} bytes free, and a new state root needs ${NEW_ROOT_BYTES}; nothing was created in it`, { path: dir });
}

/** 'absent', 'file', or the refusal of a path that is there and is not a regular file. */
function kindOf(path: string): 'absent' | 'file' | LanewardError {
  try {
    const stat = lstatSync(path);
    if (stat.isFile()) return 'file';
    const what = stat.isSymbolicLink() ? 'a symlink' : stat.isDirectory() ? 'a directory' : stat.isFIFO() ? 'a FIFO' : stat.isSocket() ? 'a socket' : 'a device';
    return corrupt(path, `is ${what}, not a file`);
  } catch (error) {
    if (errnoCode(error) === 'ENOENT') return 'absent';
    return new LanewardError('STATE_UNAVAILABLE', `${basename(path)} cannot be read (${errnoCode(error) ?? toError(error).message})`, { path, cause: error });
  }
}

function corrupt(path: string, why: string): LanewardError {
  return new LanewardError('STATE_CORRUPT', `${basename(path)} ${why}`, { path });
}

function checkData(fd: number, path: string, readOnly: boolean): LanewardError | null {
  const size = fstatSync(fd).size;
  // An empty data.mdb is what LMDB itself reads as a new environment (a create that
  // stopped before its first write): a writer initialises it, a reader finds nothing.
  if (size === 0) return readOnly ? new LanewardError('STATE_UNAVAILABLE', 'data.mdb is empty: the state root holds no state yet', { path }) : roomForNew(dirname(path));
  const first = readAt(fd, 0, HEADER + META_BYTES);
  if (first.length < HEADER + META_BYTES) return corrupt(path, `is ${size} bytes, shorter than an LMDB meta page (truncated)`);
  const meta0 = metaOf(first, HEADER);
  if ((first.readUInt16LE(18) & P_META) === 0 || first.readUInt32LE(HEADER) !== MAGIC) return corrupt(path, 'is not an LMDB environment (no meta page with its magic at offset 0)');
  if ((first.readUInt32LE(HEADER + 4) & 0xffff) !== DATA_VERSION) return corrupt(path, `is an LMDB environment of data version ${first.readUInt32LE(HEADER + 4) & 0xffff}, not ${DATA_VERSION}`);
  const pageSize = meta0.pageSize;
  if (pageSize < 512 || pageSize > 65536 || (pageSize & (pageSize - 1)) !== 0) return corrupt(path, `names a page size of ${pageSize} bytes`);
  if (size < 2 * pageSize) return corrupt(path, `is ${size} bytes, shorter than its two meta pages of ${pageSize} (truncated)`);
  const second = readAt(fd, pageSize, HEADER + META_BYTES);
  if ((second.readUInt16LE(18) & P_META) === 0 || second.readUInt32LE(HEADER) !== MAGIC) return corrupt(path, `has no second meta page at offset ${pageSize}`);
  const metas = [meta0, metaOf(second, HEADER)];
  // lmdb's overlapping sync keeps a third meta in the second half of page 0 (no magic).
  const flushed = readAt(fd, pageSize / 2, HEADER + META_BYTES);
  if (flushed.length === HEADER + META_BYTES && metaOf(flushed, HEADER).txnid !== 0n) metas.push(metaOf(flushed, HEADER));
  for (const meta of metas) {
    const bad = badMeta(meta, pageSize);
    if (bad !== null) return corrupt(path, bad);
  }
  const newest = metas.reduce((a, b) => (b.txnid > a.txnid ? b : a));
  const pages = BigInt(Math.floor(size / pageSize));
  if (newest.lastPage < pages) return null;
  return walk(fd, path, pageSize, pages, [newest.mainRoot, newest.freeRoot]);
}

function metaOf(buffer: Buffer, at: number): Meta {
  // MDB_meta: magic, version, address, mapsize, two MDB_db of 48 bytes, last page, txnid.
  const db = (i: number) => at + 24 + 48 * i;
  return {
    pageSize: buffer.readUInt32LE(db(0)),
    freeRoot: buffer.readBigUInt64LE(db(0) + 40),
    mainRoot: buffer.readBigUInt64LE(db(1) + 40),
    lastPage: buffer.readBigUInt64LE(at + 120),
    txnid: buffer.readBigUInt64LE(at + 128),
  };
}

function badMeta(meta: Meta, pageSize: number): string | null {
  if (meta.pageSize !== pageSize) return `has meta pages of different page sizes (${pageSize} and ${meta.pageSize})`;
  // 2^40 pages of 512 bytes is half a petabyte: anything past it is not a page number.
  if (meta.lastPage < 1n || meta.lastPage > 2n ** 40n) return `names ${meta.lastPage} as its last page`;
  for (const root of [meta.freeRoot, meta.mainRoot]) {
    if (root !== NO_PAGE && (root < 2n || root > meta.lastPage)) return `names page ${root} as a root, outside its pages 2-${meta.lastPage}`;
  }
  return null;
}

/**
 * Every page the trees reach from `roots` (the main database, the named databases in
 * it, the free list, and their overflow pages) must lie inside the file's `pages`.
 */
function walk(fd: number, path: string, pageSize: number, pages: bigint, roots: bigint[]): LanewardError | null {
  const seen = new Set<bigint>();
  const todo = roots.filter((root) => root !== NO_PAGE);
  while (todo.length > 0) {
    const pgno = todo.pop()!;
    if (seen.has(pgno)) continue;
    seen.add(pgno);
    if (pgno >= pages) return corrupt(path, `is ${pages} pages of ${pageSize} bytes, and its trees reach page ${pgno} (truncated)`);
    if (seen.size > Number(pages)) return corrupt(path, 'has trees that reach more pages than the file holds');
    const page = readAt(fd, Number(pgno) * pageSize, pageSize);
    const flags = page.readUInt16LE(18);
    if ((flags & P_OVERFLOW) !== 0) continue;
    if ((flags & (P_BRANCH | P_LEAF)) === 0) return corrupt(path, `has page ${pgno} in a tree that is neither a branch nor a leaf (flags ${flags})`);
    if ((flags & P_LEAF2) !== 0) continue;
    const count = page.readUInt16LE(20) >> 1;
    for (let i = 0; i < count; i++) {
      const node = HEADER + page.readUInt16LE(HEADER + 2 * i);
      if (node + 8 > pageSize) return corrupt(path, `has page ${pgno} with a node outside it`);
      const lo = BigInt(page.readUInt16LE(node));
      const hi = BigInt(page.readUInt16LE(node + 2));
      const nodeFlags = page.readUInt16LE(node + 4);
      const keySize = page.readUInt16LE(node + 6);
      if ((flags & P_BRANCH) !== 0) {
        todo.push(lo | (hi << 16n) | (BigInt(nodeFlags) << 32n));
        continue;
      }
      const value = node + 8 + keySize;
      if ((nodeFlags & F_BIGDATA) !== 0) {
        if (value + 8 > pageSize) return corrupt(path, `has page ${pgno} with a node outside it`);
        const first = page.readBigUInt64LE(value);
        if (first >= pages) return corrupt(path, `is ${pages} pages of ${pageSize} bytes, and its trees reach page ${first} (truncated)`);
        const count = BigInt(readAt(fd, Number(first) * pageSize, HEADER).readUInt32LE(20));
        if (first + count > pages) return corrupt(path, `is ${pages} pages of ${pageSize} bytes, and a value reaches page ${first + count - 1n} (truncated)`);
      } else if ((nodeFlags & F_SUBDATA) !== 0) {
        if (value + 48 > pageSize) return corrupt(path, `has page ${pgno} with a node outside it`);
        const root = page.readBigUInt64LE(value + 40);
        if (root !== NO_PAGE) todo.push(root);
      }
    }
  }
  return null;
}

function readAt(fd: number, position: number, length: number): Buffer {
  const buffer = Buffer.alloc(length);
  let done = 0;
  while (done < length) {
    const got = readSync(fd, buffer, done, length - done, position + done);
    if (got === 0) break;
    done += got;
  }
  return buffer.subarray(0, done);
}
