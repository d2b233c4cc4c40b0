/** The printable part of a daemon's log line, without Unbound's `[time] unbound[pid:thread]` prefix. */
function cleanLine(line: string): string {
  return line.replace(/^\[\d+\]\s+\S+\[\d+:\d+\]\s+/, '').replace(/[^\x20-\x7e]/g, '').trim().slice(0, 300);
}

/**
 * Why a run failed: the last two lines of its own output that read like errors (a daemon often names the cause
 * on one line and gives up on the next: "can't bind socket …", "fatal error: could not open ports"), else its
 * last line.
 */
export function failureReason(lines: string[]): string | null {
  const meaningful = lines.map(cleanLine).filter((line) => line && !/ exited \(/.test(line));
  const errors = meaningful.filter((line) => /fatal|error|unable|cannot|can't|could not|failed|denied|in use/i.test(line));
  const reason = errors.length ? [...new Set(errors.slice(-2))].join('; ') : meaningful.at(-1);
  return reason ?? null;
}
