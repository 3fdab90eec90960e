/** Creates the test CA and a localhost certificate under `dir` unless they exist; returns `dir`. */
export function ensureTestCa(dir: string): string;
