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
    const source = rendered.split('\n')[number - 1];
    if (source === undefined) continue;
    const keyword = /^\s*([A-Za-z_][\w-]*)/.exec(source)?.[1] ?? 'statement';
    const diagnostic = located[2].replace(/[^\x20-\x7e]/g, '').trim().slice(0, 160);
    return { message: `${tool} refused line ${number} (${keyword})${diagnostic ? `: ${diagnostic}` : ''}`, detail };
  }
  return { message: `${tool} refused the ruleset without naming a line of it (details in the server log)`, detail };
}
