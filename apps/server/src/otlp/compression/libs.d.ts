// The two decompressors ship without type declarations; these cover what is used.
declare module 'snappyjs' {
  export function uncompress<T extends Uint8Array>(compressed: T, maxLength?: number): T;
  export function compress<T extends Uint8Array>(uncompressed: T): T;
}

declare module 'lz4js' {
  /** Decodes one LZ4 block from src[sIndex, sIndex+sLength) into dst at dIndex; returns the new end of dst. */
  export function decompressBlock(
    src: Uint8Array,
    dst: Uint8Array,
    sIndex: number,
    sLength: number,
    dIndex: number,
  ): number;
  const lz4js: { decompressBlock: typeof decompressBlock };
  export default lz4js;
}
