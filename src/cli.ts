import { readFileSync } from 'node:fs';
import { parseOptions, UsageError, wantsHelp } from './cli/args.js';
import { commands, findCommand, groups } from './cli/commands.js';
import { commandHelp, EXIT, groupHelp, overallHelp } from './cli/help.js';
import { Session } from './cli/session.js';
import { didYouMean } from './cli/suggest.js';
import { ConfigError } from './platform/config.js';

/**
 * The operator CLI (README.md, "Operator CLI"): one parser (src/cli/args.ts) and one command table
 * (src/cli/commands.ts). Every command takes --json (one JSON object on stdout, nothing else),
 * --help and -h; errors are one line on stderr, exit codes in src/cli/help.ts. Uses the server's
 * DATABASE_URL.
 */

function version(): string {
  // src/cli.ts and dist/cli.js are both one level below package.json.
  return (JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { version: string }).version;
}

function print(json: boolean, result: Record<string, unknown>): void {
  if (json) {
    process.stdout.write(JSON.stringify(result) + '\n');
    return;
  }
  for (const [k, v] of Object.entries(result)) process.stdout.write(`${k}: ${Array.isArray(v) ? v.join(', ') || '(none)' : v}\n`);
  if ('apiKey' in result) process.stdout.write('The API key is shown only this once; keep it secret.\n');
}

function usageError(problem: string, helpCommand: string): number {
  process.stderr.write(`sunap: ${problem}; run "sunap ${helpCommand}--help"\n`);
  return EXIT.USAGE;
}

/** The help `sunap help <words>` or `sunap <words> --help` asks for; null: no such command. */
function helpFor(words: string[]): string | null {
  const found = findCommand(words);
  if (found && found.rest.length === 0) return commandHelp(found.command);
  if (words.length === 1 && groups.includes(words[0]!)) return groupHelp(words[0]!);
  return null;
}

/** Runs one command line; the exit code, or null while a command keeps running (serve). */
export async function main(argv: string[]): Promise<number | null> {
  const [first, ...more] = argv;
  if (first === undefined) return usageError('no command given', '');
  if (first === '--help' || first === '-h' || first === 'help') {
    if (first === 'help' && more.length > 0) {
      const text = helpFor(more);
      if (!text) return usageError(`help: unknown command "${more.join(' ')}"`, '');
      process.stdout.write(text);
      return EXIT.OK;
    }
    if (more.length > 0) return usageError(`${first}: unexpected argument "${more[0]}"`, '');
    process.stdout.write(overallHelp(version()));
    return EXIT.OK;
  }
  if (first === '--version' || first === '-V') {
    if (more.length > 0) return usageError(`${first}: unexpected argument "${more[0]}"`, '');
    process.stdout.write(`${version()}\n`);
    return EXIT.OK;
  }

  const found = findCommand(argv);
  if (!found) return noCommand(first, more);
  const { command, rest } = found;
  if (wantsHelp(rest)) {
    process.stdout.write(commandHelp(command));
    return EXIT.OK;
  }

  let parsed;
  try {
    parsed = parseOptions(command.options, rest);
  } catch (err) {
    if (err instanceof UsageError) return usageError(err.message, `${command.name} `);
    throw err;
  }
  const session = new Session();
  try {
    const result = await command.run(parsed.values, session);
    if (result && command.print) return command.print(result, parsed.json);
    if (result) print(parsed.json, result);
    return result ? EXIT.OK : null;
  } catch (err) {
    return failed(err);
  } finally {
    await session.close();
  }
}

/** A line whose first words name no command: a group alone (or its help), or nothing known. */
function noCommand(first: string, more: string[]): number {
  if (!groups.includes(first)) {
    const words = commands.map((c) => c.name.split(' ')[0]!);
    return usageError(first.startsWith('-') ? `unknown option ${first} (options come after the command)` : `unknown command "${first}"${didYouMean(first, words)}`, '');
  }
  const next = more[0];
  if (next !== undefined && !next.startsWith('-')) {
    const seconds = commands.filter((c) => c.name.startsWith(`${first} `)).map((c) => c.name.split(' ')[1]!);
    return usageError(`unknown command "${first} ${next}"${didYouMean(next, seconds, (w) => `${first} ${w}`)}`, `${first} `);
  }
  if (wantsHelp(more)) {
    process.stdout.write(groupHelp(first));
    return EXIT.OK;
  }
  const members = commands.filter((c) => c.name.startsWith(`${first} `)).map((c) => c.name);
  return usageError(`"${first}" needs a command: ${members.join(', ')}`, `${first} `);
}

function failed(err: unknown): number {
  if (err instanceof ConfigError) {
    process.stderr.write(`sunap: configuration error: ${err.message}\n`);
    return EXIT.CONFIG;
  }
  // An OperatorError of the domain (no such platform, email taken, ...) or anything else, such as an
  // unreachable database: one line, exit 1. AggregateError (pg trying several addresses) has no message.
  const e = err as Error & { code?: string };
  const text = (e?.message || e?.code || String(err)).split('\n')[0];
  process.stderr.write(`sunap: ${text}\n`);
  return EXIT.FAILED;
}

const isMain = process.argv[1] && /cli\.[tj]s$|sunap(\.js)?$/.test(process.argv[1]);
if (isMain) {
  const code = await main(process.argv.slice(2));
  if (code !== null) process.exitCode = code;
}
