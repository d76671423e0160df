/**
 * A set of row ids kept as 64-bit hashes (two independent 32-bit lanes) with the line
 * each was first seen on, so a 1 GB file's ids cost 12 bytes a slot instead of a string
 * each. A hash hit is only a candidate duplicate: the caller re-reads both lines and
 * compares the ids exactly before reporting anything.
 */
export class IdIndex {
  private hi: Uint32Array;
  private lo: Uint32Array;
  private lines: Uint32Array;
  private mask: number;
  private used = 0;

  constructor(initialCapacity = 1024) {
    let capacity = 1024;
    while (capacity < initialCapacity * 2) capacity *= 2;
    this.hi = new Uint32Array(capacity);
    this.lo = new Uint32Array(capacity);
    this.lines = new Uint32Array(capacity);
    this.mask = capacity - 1;
  }

  get size(): number {
    return this.used;
  }

  /** Adds `id` first seen on `line` (>= 1). Returns 0, or the earlier line whose id hashes the same. */
  add(id: string, line: number): number {
    // Hint: FNV-1a and a murmur-style mix in one pass over the string; no allocation.
    let a = 0x811c9dc5;
    let b = 0x9747b28c;
    for (let i = 0; i < id.length; i++) {
      const c = id.charCodeAt(i);
      a = Math.imul(a ^ c, 0x01000193);
      b = Math.imul(b ^ c, 0x5bd1e995);
      b ^= b >>> 15;
    }
    a >>>= 0;
    b = (b ^ id.length) >>> 0;
    let slot = a & this.mask;
    for (;;) {
      const seen = this.lines[slot]!;
      if (seen === 0) break;
      if (this.hi[slot] === a && this.lo[slot] === b) return seen;
      slot = (slot + 1) & this.mask;
    }
    this.hi[slot] = a;
    this.lo[slot] = b;
    this.lines[slot] = line;
    this.used += 1;
    if (this.used * 4 > this.lines.length * 3) this.grow();
    return 0;
  }

  private grow(): void {
    const { hi, lo, lines } = this;
    const capacity = lines.length * 2;
    this.hi = new Uint32Array(capacity);
    this.lo = new Uint32Array(capacity);
    this.lines = new Uint32Array(capacity);
    this.mask = capacity - 1;
    for (let i = 0; i < lines.length; i++) {
      if (lines[i] === 0) continue;
      let slot = hi[i]! & this.mask;
      while (this.lines[slot] !== 0) slot = (slot + 1) & this.mask;
      this.hi[slot] = hi[i]!;
      this.lo[slot] = lo[i]!;
      this.lines[slot] = lines[i]!;
    }
  }
}
