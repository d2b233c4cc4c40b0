/**
 * Flow export on Linux with Debian's softflowd: one supervised foreground process per exporting interface
 * (softflowd captures one interface each), started as `nobody` with only CAP_NET_RAW (setpriv), its pid file and
 * control socket in its own runtime state directory. A process that dies is restarted by its supervisor; a
 * changed specification restarts the processes whose arguments changed and stops those no longer wanted.
 *
 * Each process is detached (src/platform/supervised-process.ts): it outlives the API process, and the next start
 * adopts it by its pid record in the root-owned runtime directory when it runs the same command line and its
 * control socket answers (`softflowctl statistics`), so flows are not cut into pieces by a restart of Bulwark.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { conflict, unavailable } from '../../core/errors.js';
import { isRenderRefusal } from '../../render/refusal.js';
import { findProgram } from '../daemon-tools.js';
import { describeMissing, missingTool } from '../debian-packages.js';
import { prepareDaemonRuntime, programRuntime } from '../daemon-runtime.js';
import { PROBE_ACCOUNT } from '../probe-account.js';
import { SupervisedProcess } from '../supervised-process.js';
import { runCommand } from '../exec.js';
import { softflowdArguments } from '../softflowd-arguments.js';
import type { FlowExporter, FlowExportInterfaceStatus, FlowExportSpec, FlowExportStatus } from '../flow-export.js';

interface Running {
  ifindex: number;
  args: string[];
  process: SupervisedProcess;
}

const READY_TIMEOUT_MS = 10_000;

/** The kernel's index of an interface (sysfs), or null when there is no such interface. */
function interfaceIndex(name: string): number | null {
  try {
    const index = Number(readFileSync(`/sys/class/net/${name}/ifindex`, 'utf8').trim());
    return Number.isInteger(index) && index > 0 ? index : null;
  } catch {
    return null;
  }
}

/** The control socket answers: `softflowctl statistics` (the socket's existence alone when softflowctl is missing). */
async function answers(controlSocket: string): Promise<boolean> {
  if (!existsSync(controlSocket)) return false;
  const softflowctl = findProgram('softflowctl');
  if (!softflowctl) return true;
  return (await runCommand(softflowctl, ['-c', controlSocket, 'statistics'], { timeoutMs: 2000 })).code === 0;
}

export function createSoftflowdExporter(): FlowExporter {
  const running = new Map<string, Running>();

  const interfaceStatus = (name: string, entry: Running | undefined): FlowExportInterfaceStatus => {
    const state = entry?.process.state();
    return {
      interface: name, ifindex: entry?.ifindex ?? interfaceIndex(name), running: state?.running ?? false, pid: state?.pid ?? null,
      restarts: state?.restarts ?? 0, last_error: state?.last_error ?? null,
    };
  };
  const status = (): FlowExportStatus => {
    const interfaces = [...running].map(([name, entry]) => interfaceStatus(name, entry));
    return { exporter: 'softflowd', running: interfaces.length > 0 && interfaces.every((i) => i.running), interfaces };
  };
  const stopOne = async (name: string) => {
    const entry = running.get(name);
    running.delete(name);
    await entry?.process.stop();
  };

  /** The command line: as the unprivileged account with CAP_NET_RAW only when Bulwark runs as root. */
  const launch = (program: string, args: string[], account: { uid: number; gid: number } | null) => {
    if (!account) return { command: program, args };
    const setpriv = findProgram('setpriv');
    if (!setpriv) throw unavailable(describeMissing(missingTool('setpriv')));
    return {
      command: setpriv,
      args: [`--reuid=${account.uid}`, `--regid=${account.gid}`, '--clear-groups', '--inh-caps=+net_raw', '--ambient-caps=+net_raw', '--', program, ...args],
    };
  };

  return {
    async apply(spec: FlowExportSpec | null): Promise<FlowExportStatus> {
      const wanted = new Set(spec?.interfaces ?? []);
      for (const name of [...running.keys()]) if (!wanted.has(name)) await stopOne(name);
      if (!spec || wanted.size === 0) return status();
      const program = findProgram('softflowd');
      if (!program) throw unavailable(describeMissing(missingTool('softflowd')));
      const runtime = programRuntime(spec.runtime, 'softflowd', PROBE_ACCOUNT);
      if (process.getuid?.() === 0 && (!runtime.account || runtime.account.uid === 0)) {
        throw unavailable(`no unprivileged account "${PROBE_ACCOUNT}" in /etc/passwd to run softflowd as (base-passwd provides it)`);
      }
      prepareDaemonRuntime(runtime);
      for (const name of wanted) {
        const ifindex = interfaceIndex(name);
        if (ifindex === null) throw conflict(`flow export: interface ${name} does not exist`);
        const files = { pidFile: join(runtime.stateDir, `if${ifindex}.pid`), controlSocket: join(runtime.stateDir, `if${ifindex}.ctl`) };
        let args: string[];
        try {
          args = softflowdArguments(spec, { name, ifindex }, files);
        } catch (error) {
          if (isRenderRefusal(error)) throw conflict(`flow export refused: ${error.message}`);
          throw error;
        }
        const current = running.get(name);
        if (current && current.process.alive && current.args.join('\0') === args.join('\0')) continue;
        await stopOne(name);
        const command = launch(program, args, runtime.account);
        const supervised = new SupervisedProcess({
          label: `softflowd ${name}`, command: command.command, args: command.args, readyTimeoutMs: READY_TIMEOUT_MS,
          ready: () => answers(files.controlSocket), readyDescription: 'answer on its control socket',
          // A socket left by a run that was killed would make softflowd refuse to start (never removed under an adopted one).
          beforeSpawn: () => rmSync(files.controlSocket, { force: true }),
          detached: { dir: runtime.dir, name: `softflowd-${name}`, configHash: createHash('sha256').update(JSON.stringify(command)).digest('hex') },
        });
        running.set(name, { ifindex, args, process: supervised });
        try {
          await supervised.start();
        } catch (error) {
          running.delete(name);
          throw conflict(`flow export: ${(error as Error).message}`);
        }
      }
      return status();
    },
    status: async () => status(),
    /** The API process stops: the exporters keep running for the next start to adopt. */
    async close() {
      for (const entry of running.values()) entry.process.release();
      running.clear();
    },
  };
}
