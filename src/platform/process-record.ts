/**
 * The record a detached supervised process leaves behind so that the next Bulwark process can adopt it: its pid,
 * the kernel's start time of that pid (so a reused pid is never mistaken for it), the program it runs and the hash
 * of the configuration it was started with. Kept in a directory only root writes (the daemon's runtime directory,
 * never the state directory the daemon itself may write), as JSON.
 */
import { readFileSync, readlinkSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';

export interface ProcessRecord {
  pid: number;
  /** Field 22 of /proc/<pid>/stat: clock ticks after boot at which the process started. */
  start_time: string;
  /** The program the process runs (/proc/<pid>/exe once it was ready). */
  exe: string;
  command: string;
  args: string[];
  /** Hash of what it was started with (configuration, options); null when the program reloads in place. */
  config_sha256: string | null;
  started_at: string;
}

export function recordFile(dir: string, name: string): string {
  return join(dir, `${name}.pid.json`);
}

export function readProcessRecord(file: string): ProcessRecord | null {
  try {
    const record = JSON.parse(readFileSync(file, 'utf8')) as ProcessRecord;
    return Number.isInteger(record.pid) && record.pid > 1 && typeof record.start_time === 'string' && typeof record.exe === 'string' ? record : null;
  } catch {
    return null;
  }
}

export function writeProcessRecord(file: string, record: ProcessRecord): void {
  const temporary = `${file}.tmp-${process.pid}`;
  writeFileSync(temporary, `${JSON.stringify(record)}\n`, { mode: 0o600 });
  renameSync(temporary, file);
}

export function removeProcessRecord(file: string): void {
  rmSync(file, { force: true });
}

/** The start time of a live (non-zombie) process, or null when there is none with that pid. */
export function processStartTime(pid: number): string | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The command name (field 2) may hold spaces and parentheses: the fields after it start past the last ')'.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    if (fields[0] === 'Z' || fields[0] === 'X') return null;
    return fields[19] ?? null;
  } catch {
    return null;
  }
}

/** The program a process runs (an upgraded binary reads `… (deleted)`: the path is what counts). */
export function processExe(pid: number): string | null {
  try {
    return readlinkSync(`/proc/${pid}/exe`).replace(/ \(deleted\)$/, '');
  } catch {
    return null;
  }
}

/** Whether the recorded process still runs: the same pid, started at the same moment, running the same program. */
export function recordedProcessRuns(record: ProcessRecord): boolean {
  const exe = processExe(record.pid);
  return processStartTime(record.pid) === record.start_time && exe !== null && basename(exe) === basename(record.exe);
}
