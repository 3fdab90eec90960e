import { COMMON, synopsis } from './args.js';
import { commands, ENV, type Command, type EnvVar } from './commands.js';

/** The help texts, built from the command table so that they cannot drift from what is parsed. */

/** USAGE is EX_USAGE of sysexits.h; CONFIG is the server's exit code for a bad variable. */
export const EXIT = { OK: 0, FAILED: 1, CONFIG: 2, USAGE: 64 } as const;

export const EXIT_CODES: [number, string][] = [
  [EXIT.OK, 'success'],
  [EXIT.FAILED, 'the operation failed or refused a value (no such platform, email taken, password too short, database unreachable, ...)'],
  [EXIT.CONFIG, 'configuration error: a bad environment variable, named in the message'],
  [EXIT.USAGE, 'usage error: no or unknown command, unknown option, missing or malformed option value, unexpected argument'],
];

const WIDTH = 100;

/** `  left   text`, the text wrapped at WIDTH and aligned under itself. */
function rows(items: [string, string][]): string {
  const pad = Math.max(...items.map(([l]) => l.length)) + 4;
  return items.map(([left, text]) => wrap(`  ${left}`.padEnd(pad), text, pad)).join('');
}

/** Words may hold spaces (`[--tel PHONE]`) and are never split. */
function wrap(first: string, text: string | string[], indent: number): string {
  const lines: string[] = [];
  let line = first;
  for (const word of typeof text === 'string' ? text.split(' ') : text) {
    if (line.length + word.length > WIDTH && line.trim().length > 0 && line.length > indent) {
      lines.push(line.trimEnd());
      line = ' '.repeat(indent);
    }
    line += word + ' ';
  }
  lines.push(line.trimEnd());
  return lines.join('\n') + '\n';
}

const envRows = (vars: readonly EnvVar[]): [string, string][] => vars.map((v) => [v, ENV[v]]);
const exitRows = (): [string, string][] => EXIT_CODES.map(([code, text]) => [String(code), text]);

export function commandHelp(c: Command): string {
  const options: [string, string][] = Object.entries(c.options).map(([name, o]) => [
    o.type === 'boolean' ? `--${name}` : `--${name} ${o.value ?? 'VALUE'}`,
    o.required ? `${o.description} (required)` : o.description,
  ]);
  options.push(['--json', COMMON.json.description], ['-h, --help', COMMON.help.description]);
  return [
    wrap(`usage: sunap ${c.name} `, synopsis(c.options), `usage: sunap ${c.name} `.length),
    wrap('', c.summary.charAt(0).toUpperCase() + c.summary.slice(1) + '.', 0),
    'options:\n' + rows(options),
    'environment:\n' + rows(envRows(c.env)),
    wrap('', `--json prints: ${c.json}`, 0) + (c.more ? '\n' + wrap('', c.more, 0) : ''),
    'exit codes:\n' + rows(exitRows()),
  ].join('\n');
}

/** `sunap platform --help`: the commands of one group. */
export function groupHelp(group: string): string {
  const members = commands.filter((c) => c.name.startsWith(`${group} `));
  return [
    `usage: sunap ${group} <${members.map((c) => c.name.slice(group.length + 1)).join('|')}> [options] [--json]\n`,
    'commands:\n' + rows(members.map((c) => [c.name, c.summary])),
    `Run "sunap ${group} <command> --help" for a command's options.\n`,
  ].join('\n');
}

export function overallHelp(version: string): string {
  return [
    `sunap ${version}: the operator CLI of Sunap, the self-hostable payment gateway and invoicing service\n`,
    'usage: sunap <command> [options] [--json]\n' +
      '       sunap <command> --help      (or: sunap help <command>) a command\'s options, and nothing else\n' +
      '       sunap --version\n',
    'commands:\n' + rows(commands.map((c) => [c.name, c.summary])),
    wrap('', 'Every command takes --json: one JSON object on stdout and nothing else; without it, key: value lines. ' +
      'Errors are one line on stderr. Every command, serve included, first brings the database schema up to date (doctor changes nothing).', 0),
    'environment (the server\'s, read the same way):\n' + rows([
      ...envRows(['DATABASE_URL', 'SUNAP_MODE', 'SUNAP_SECRET_KEY']),
      ['PORT, HOST', `serve: ${ENV.PORT}, ${ENV.HOST}`],
      ['LOG_LEVEL', `serve: ${ENV.LOG_LEVEL}`],
    ]) + '  (all of them: README.md, section Configuration)\n',
    'exit codes:\n' + rows(exitRows()),
  ].join('\n');
}
