import { Command, CommanderError } from 'commander';
import { readFileSync } from 'node:fs';
import { deployCommand, SendError, type Io } from './deploy/command.ts';
import { UsageError } from './deploy/markers.ts';
import { LockfileError } from './lockfiles/index.ts';
import { NoMarkerError } from './verify/fetch.ts';
import { VERDICT_EXIT, VerdictExit, verifyCommand } from './verify/command.ts';

/**
 * Exit codes of `onset deploy`: 0 recorded (or dry run); 1 the server refused
 * a marker or could not be reached after retries; 2 bad flags or unreadable
 * input (nothing sent). A verdict gate (`onset deploy verify`, `onset deploy
 * --verify`) exits 0 pass, 1 fail, 2 inconclusive, and 3 for every problem
 * that leaves it without a verdict, so that no error reads as a verdict.
 */
export async function main(argv: string[], io: Io): Promise<number> {
  const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as {
    version: string;
  };
  const gate = argv[0] === 'deploy' && (argv[1] === 'verify' || argv.includes('--verify'));
  const output = {
    writeOut: (s: string) => io.out(s.trimEnd()),
    writeErr: (s: string) => io.err(s.trimEnd()),
  };
  const program = new Command('onset')
    .description('Onset command line: deploy markers and verdicts from CI hooks')
    .version(pkg.version)
    .exitOverride()
    .configureOutput(output);
  program.addCommand(
    deployCommand(io)
      .enablePositionalOptions()
      .exitOverride()
      .configureOutput(output)
      .addCommand(verifyCommand(io).exitOverride().configureOutput(output)),
  );
  program.enablePositionalOptions();
  try {
    await program.parseAsync(argv, { from: 'user' });
    return 0;
  } catch (err) {
    if (err instanceof VerdictExit) return err.exitCode;
    const problem = (code: number) => (gate ? VERDICT_EXIT.none : code);
    if (err instanceof CommanderError) return err.exitCode === 0 ? 0 : problem(2);
    if (err instanceof UsageError || err instanceof LockfileError) {
      io.err(`onset: ${err.message}`);
      return problem(2);
    }
    if (err instanceof SendError || err instanceof NoMarkerError) {
      io.err(`onset: ${err.message}`);
      return problem(1);
    }
    io.err(`onset: ${(err as Error).stack ?? String(err)}`);
    return problem(1);
  }
}
