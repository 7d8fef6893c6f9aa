/**
 * A minimal reader for the kernel's BTF type information
 * (/sys/kernel/btf/vmlinux). The bpftrace programs need a few struct member
 * offsets that bpftrace 0.17 cannot resolve itself on new kernels (it fails to
 * parse `struct file` on 6.x, and has no offsetof()), so the agent reads them
 * here and passes them to bpftrace as positional parameters.
 *
 * Format: https://docs.kernel.org/bpf/btf.html (header, type section, string section).
 */
import { readFileSync } from 'node:fs';

const BTF_MAGIC = 0xeb9f;
const KIND = {
  INT: 1,
  PTR: 2,
  ARRAY: 3,
  STRUCT: 4,
  UNION: 5,
  ENUM: 6,
  FWD: 7,
  TYPEDEF: 8,
  VOLATILE: 9,
  CONST: 10,
  RESTRICT: 11,
  FUNC: 12,
  FUNC_PROTO: 13,
  VAR: 14,
  DATASEC: 15,
  FLOAT: 16,
  DECL_TAG: 17,
  TYPE_TAG: 18,
  ENUM64: 19,
} as const;

interface BtfType {
  nameOff: number;
  kind: number;
  vlen: number;
  kindFlag: boolean;
  sizeOrType: number;
  /** Byte offset of the kind-specific data that follows the 12-byte header. */
  extra: number;
}

/**
 * The kernel's BTF has ~100,000 types, of which the agent needs three structs: only where each
 * type starts is kept (one typed array), types are decoded when looked at, and names are
 * compared as bytes, so reading it leaves little garbage behind in a long-running agent.
 */
export class Btf {
  /** Byte offset of each type's header, by type id (ids start at 1; slot 0 is unused). */
  private readonly typeAt: Uint32Array;
  private readonly strOff: number;
  private readonly byName = new Map<string, number[]>();

  constructor(private readonly buf: Buffer) {
    if (buf.readUInt16LE(0) !== BTF_MAGIC) throw new Error('not a BTF blob (bad magic)');
    const hdrLen = buf.readUInt32LE(4);
    const typeOff = hdrLen + buf.readUInt32LE(8);
    const typeLen = buf.readUInt32LE(12);
    this.strOff = hdrLen + buf.readUInt32LE(16);
    // A type header is at least 12 bytes: an upper bound for the count.
    const at = new Uint32Array(Math.floor(typeLen / 12) + 2);
    let n = 1;
    let p = typeOff;
    const end = typeOff + typeLen;
    while (p < end) {
      at[n++] = p;
      const info = buf.readUInt32LE(p + 4);
      p += 12 + extraBytes((info >>> 24) & 0x1f, info & 0xffff);
    }
    this.typeAt = at.slice(0, n);
  }

  static fromKernel(path = '/sys/kernel/btf/vmlinux'): Btf {
    return new Btf(readFileSync(path));
  }

  private type(id: number): BtfType {
    const p = this.typeAt[id]!;
    const info = this.buf.readUInt32LE(p + 4);
    return {
      nameOff: this.buf.readUInt32LE(p),
      kind: (info >>> 24) & 0x1f,
      vlen: info & 0xffff,
      kindFlag: info >>> 31 === 1,
      sizeOrType: this.buf.readUInt32LE(p + 8),
      extra: p + 12,
    };
  }

  /** Ids of the structs and unions called `name`. */
  private named(name: string): number[] {
    let ids = this.byName.get(name);
    if (!ids) {
      ids = [];
      const want = Buffer.from(`${name}\0`, 'latin1');
      for (let id = 1; id < this.typeAt.length; id++) {
        const p = this.typeAt[id]!;
        const kind = (this.buf.readUInt32LE(p + 4) >>> 24) & 0x1f;
        if (kind !== KIND.STRUCT && kind !== KIND.UNION) continue;
        const s = this.strOff + this.buf.readUInt32LE(p);
        if (this.buf.compare(want, 0, want.length, s, s + want.length) === 0) ids.push(id);
      }
      this.byName.set(name, ids);
    }
    return ids;
  }

  /** Byte offset of `member` inside `struct name`, looking through anonymous unions/structs. */
  memberOffset(structName: string, member: string): number | undefined {
    for (const id of this.named(structName)) {
      const t = this.type(id);
      if (t.kind !== KIND.STRUCT || t.sizeOrType === 0) continue;
      const found = this.findMember(id, member, 0);
      if (found) return found.bitOffset / 8;
    }
    return undefined;
  }

  /** The BTF kind name of a struct member's type after typedef/const/volatile: 'array', 'struct', 'int', ... */
  memberKind(structName: string, member: string): string | undefined {
    for (const id of this.named(structName)) {
      const found = this.findMember(id, member, 0);
      if (found) return kindName(this.type(this.resolve(found.typeId)).kind);
    }
    return undefined;
  }

  private findMember(
    typeId: number,
    member: string,
    base: number,
  ): { bitOffset: number; typeId: number } | undefined {
    const t = this.type(typeId);
    for (let i = 0; i < t.vlen; i++) {
      const m = t.extra + 12 * i;
      const name = this.str(this.buf.readUInt32LE(m));
      const memberType = this.buf.readUInt32LE(m + 4);
      const rawOffset = this.buf.readUInt32LE(m + 8);
      const bitOffset = base + (t.kindFlag ? rawOffset & 0xffffff : rawOffset);
      if (name === member) return { bitOffset, typeId: memberType };
      if (name === '') {
        const inner = this.resolve(memberType);
        const k = this.type(inner).kind;
        if (k === KIND.STRUCT || k === KIND.UNION) {
          const found = this.findMember(inner, member, bitOffset);
          if (found) return found;
        }
      }
    }
    return undefined;
  }

  private resolve(typeId: number): number {
    let id = typeId;
    for (let guard = 0; guard < 32; guard++) {
      const t = this.type(id);
      if (
        t.kind === KIND.TYPEDEF ||
        t.kind === KIND.CONST ||
        t.kind === KIND.VOLATILE ||
        t.kind === KIND.RESTRICT ||
        t.kind === KIND.TYPE_TAG
      )
        id = t.sizeOrType;
      else return id;
    }
    return id;
  }

  private str(off: number): string {
    const start = this.strOff + off;
    const end = this.buf.indexOf(0, start);
    return this.buf.toString('latin1', start, end);
  }
}

function extraBytes(kind: number, vlen: number): number {
  switch (kind) {
    case KIND.INT:
    case KIND.VAR:
    case KIND.DECL_TAG:
      return 4;
    case KIND.ARRAY:
      return 12;
    case KIND.STRUCT:
    case KIND.UNION:
    case KIND.DATASEC:
    case KIND.ENUM64:
      return 12 * vlen;
    case KIND.ENUM:
    case KIND.FUNC_PROTO:
      return 8 * vlen;
    case KIND.PTR:
    case KIND.FWD:
    case KIND.TYPEDEF:
    case KIND.VOLATILE:
    case KIND.CONST:
    case KIND.RESTRICT:
    case KIND.FUNC:
    case KIND.FLOAT:
    case KIND.TYPE_TAG:
      return 0;
    default:
      // A kind newer than this reader: its size is unknown, so the rest cannot be walked.
      throw new Error(`unknown BTF kind ${kind}`);
  }
}

function kindName(kind: number): string {
  const entry = Object.entries(KIND).find(([, v]) => v === kind);
  return entry ? entry[0].toLowerCase() : `kind${kind}`;
}

/** The offsets the bpftrace programs need, or why they are unavailable. */
export interface KernelLayout {
  /** offsetof(struct file, f_path) */
  fileFPath: number;
  /** offsetof(struct mount, mnt): turns a `struct vfsmount *` into its `struct mount *`. */
  mountMnt: number;
  /** 'percpu' on kernels >= 6.2 (rss_stat is percpu_counter[]), 'atomic' before. */
  rssStat: 'percpu' | 'atomic';
}

export function readKernelLayout(path?: string): { layout?: KernelLayout; reason?: string } {
  let btf: Btf;
  try {
    btf = Btf.fromKernel(path);
  } catch (e) {
    return { reason: `kernel BTF unavailable (${(e as Error).message})` };
  }
  const fileFPath = btf.memberOffset('file', 'f_path');
  const mountMnt = btf.memberOffset('mount', 'mnt');
  const rssKind = btf.memberKind('mm_struct', 'rss_stat');
  if (fileFPath === undefined || mountMnt === undefined || rssKind === undefined)
    return {
      reason: 'kernel BTF lacks struct file.f_path, struct mount.mnt or mm_struct.rss_stat',
    };
  return { layout: { fileFPath, mountMnt, rssStat: rssKind === 'array' ? 'percpu' : 'atomic' } };
}
