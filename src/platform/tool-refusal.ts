/**
 * What a client learns when a tool (nft, pfctl) refuses a ruleset Bulwark rendered and fed on stdin: the line
 * of that rendered text the tool pointed at, the line's first keyword (read from our own text) and the tool's
 * one-line diagnostic, printable ASCII only. Output located anywhere else (an included file, a path) never
 * reaches the client; the whole output goes to the server log through `detail`.
 */
export function summariseRefusal(tool: string, output: string, rendered: string): { message: string; detail: string } {
  const detail = output.trim();
  for (const line of detail.split('\n')) {
    // nft: "/dev/stdin:12:5-10: Error: …"; pfctl: "stdin:12: …"
    const located = /^(?:\/dev\/stdin|stdin|-):(\d+)(?::[\d-]+)?:\s*(?:Error:\s*)?(.*)$/.exec(line.trim());
    if (!located) continue;
    const number = Number(located[1]);
    if (rendered.split('\n')[number - 1] === undefined) continue;
    const keyword = keywordAt(rendered, number) ?? 'statement';
    const diagnostic = located[2].replace(/[^\x20-\x7e]/g, '').trim().slice(0, 160);
    return { message: `${tool} refused line ${number} (${keyword})${diagnostic ? `: ${diagnostic}` : ''}`, detail };
  }
  return { message: `${tool} refused the ruleset without naming a line of it (details in the server log)`, detail };
}

/** The keyword on a line of a rendered file: a directive or statement, or the nearest JSON key (Kea). */
export function keywordAt(text: string, line: number): string | null {
  const lines = text.split('\n');
  const directive = /^\s*([A-Za-z][A-Za-z0-9_-]*)/.exec(lines[line - 1] ?? '')?.[1];
  if (directive) return directive;
  for (let index = line - 1; index >= 0 && index >= line - 50; index--) {
    const key = /"([A-Za-z0-9_-]+)"\s*:/.exec(lines[index] ?? '')?.[1];
    if (key) return key;
  }
  return null;
}
