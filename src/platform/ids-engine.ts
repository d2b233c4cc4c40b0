export interface IdsEngineStatus {
  running: boolean;
  mode: 'ids' | 'ips' | 'disabled';
  loaded_rules: number;
  packets_inspected: number;
  alerts_total: number;
  drops_total: number;
  bytes_per_sec: number;
  packets_per_sec: number;
  flow_count: number;
  flow_reassembly_bytes: number;
  uptime_secs: number;
}

/** The intrusion-detection engine: loads the compiled rule file and reports its counters. */
export interface IdsEngine {
  /** (Re)loads the engine with the given mode and rule text (Suricata syntax, one rule per line). */
  reload(options: { mode: 'ids' | 'ips' | 'disabled'; rules: string; interfaces: string[] }): Promise<void>;
  status(): Promise<IdsEngineStatus>;
  /** Records alerts the engine produced (counted in alerts_total); used by EVE ingestion. */
  countAlerts(count: number): Promise<void>;
}
