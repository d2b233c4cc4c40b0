import type { FlowExporter, FlowExportSpec, FlowExportStatus } from '../flow-export.js';

/** The simulated platform exports nothing: it keeps the specification and reports it as running, marked simulated. */
export function createSimulatedFlowExport(): FlowExporter {
  let current: FlowExportSpec | null = null;
  const status = (): FlowExportStatus => ({
    exporter: 'simulated',
    running: current !== null && current.interfaces.length > 0,
    interfaces: (current?.interfaces ?? []).map((name, index) => ({ interface: name, ifindex: index + 2, running: true, pid: null, restarts: 0, last_error: null })),
  });
  return {
    async apply(spec) {
      current = spec;
      return status();
    },
    status: async () => status(),
    async close() {
      current = null;
    },
  };
}
