/** Thrown when a body inflates past the configured limit (answered 413). */
export class DecompressedTooLarge extends Error {
  constructor(readonly limit: number) {
    super(`decompressed body exceeds the ${limit}-byte limit`);
  }
}

/** Collects output chunks and stops as soon as their total passes the limit. */
export class BoundedOutput {
  private readonly chunks: Uint8Array[] = [];
  private total = 0;
  constructor(private readonly limit: number) {}

  push(chunk: Uint8Array): void {
    this.total += chunk.length;
    if (this.total > this.limit) throw new DecompressedTooLarge(this.limit);
    this.chunks.push(chunk);
  }

  get length(): number {
    return this.total;
  }

  toBuffer(): Buffer {
    return Buffer.concat(this.chunks, this.total);
  }
}
