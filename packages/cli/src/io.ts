/** Where a command writes (stdout lines, stderr lines) and the environment it reads. */
export interface Io {
  out: (line: string) => void;
  err: (line: string) => void;
  env: Record<string, string | undefined>;
}
