/** Ingest counters, read by /metrics and the status API. */
export class IngestStats {
  readonly acceptedByKind = new Map<string, number>();
  readonly duplicatesByKind = new Map<string, number>();
  readonly rejectedByReason = new Map<string, number>();

  accepted(kind: string, n: number, duplicates: number): void {
    this.acceptedByKind.set(kind, (this.acceptedByKind.get(kind) ?? 0) + n);
    this.duplicatesByKind.set(kind, (this.duplicatesByKind.get(kind) ?? 0) + duplicates);
  }

  rejected(reason: string, n: number): void {
    this.rejectedByReason.set(reason, (this.rejectedByReason.get(reason) ?? 0) + n);
  }
}
