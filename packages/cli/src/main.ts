import { Command, CommanderError } from 'commander';
import { readFileSync } from 'node:fs';
import { deployCommand, SendError, type Io } from './deploy/command.ts';
import { UsageError } from './deploy/markers.ts';
import { LockfileError } from './lockfiles/index.ts';

/**
 * Exit codes: 0 recorded (or dry run); 1 the server refused a marker or could
 * not be reached after retries; 2 bad flags or unreadable input (nothing sent).
 */
export async function main(argv: string[], io: Io): Promise<number> {
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
    version: string;
  };
  const program = new Command('onset')
    .description('Onset command line: deploy markers from CI hooks')
    .version(pkg.version)
    .exitOverride()
    .configureOutput({
      writeOut: (s) => io.out(s.trimEnd()),
      writeErr: (s) => io.err(s.trimEnd()),
    });
  program.addCommand(
    deployCommand(io)
      .exitOverride()
      .configureOutput({
        writeOut: (s) => io.out(s.trimEnd()),
        writeErr: (s) => io.err(s.trimEnd()),
      }),
  );
  try {
    await program.parseAsync(argv, { from: 'user' });
    return 0;
  } catch (err) {
    if (err instanceof CommanderError) return err.exitCode === 0 ? 0 : 2;
    if (err instanceof UsageError || err instanceof LockfileError) {
      io.err(`onset: ${err.message}`);
      return 2;
    }
    if (err instanceof SendError) {
      io.err(`onset: ${err.message}`);
      return 1;
    }
    io.err(`onset: ${(err as Error).stack ?? String(err)}`);
    return 1;
  }
}
