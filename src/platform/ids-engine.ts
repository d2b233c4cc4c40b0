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
  /** False when the engine's program is missing: control calls then answer 503 naming what to install. */
  installed: boolean;
  /** What runs the detection, or why nothing can (`suricata 7.0.3`, `Suricata is not installed …`, `simulated`). */
  engine: string;
  /** The supervised engine process (a real engine): automatic restarts after it died, and why it last ended. */
  restarts?: number;
  last_error?: string | null;
}

/** Files a real engine runs from: its configuration (rendered by the IDS area) and its log directory. */
export interface IdsInstall {
  configFile: string;
  logDir: string;
  /** Where the merged rules file (suricata.rules) and threshold.config are. */
  ruleDir: string;
  /** One checked rules file per enabled ruleset, merged by suricata-update into `ruleDir/suricata.rules`. */
  sources: string[];
  /** The NFQUEUE number IPS mode reads from. */
  queue: number;
}

/** The intrusion-detection engine: loads the compiled rule file and reports its counters. */
export interface IdsEngine {
  /** `suricata`: a real engine that needs `install` (suricata.yaml rendered by the area); `simulated`: none. */
  readonly kind: 'simulated' | 'suricata';
  /** (Re)loads the engine with the given mode and rule text (Suricata syntax, one rule per line). */
  reload(options: {
    mode: 'ids' | 'ips' | 'disabled'; rules: string; interfaces: string[]; install?: IdsInstall;
    /**
     * A start of Bulwark bringing back the applied state: an engine an earlier API process left running with this
     * configuration is adopted even when the checker refuses the rules now (it keeps its last good rules, supervised),
     * and the refusal is still thrown so the start reports it.
     */
    restoring?: boolean;
  }): Promise<void>;
  status(): Promise<IdsEngineStatus>;
  /** Records alerts the engine produced (counted in alerts_total); used by EVE ingestion. */
  countAlerts(count: number): Promise<void>;
  /** EVE JSON lines as the engine writes them (whole lines, in order); returns the unsubscribe. */
  onEve(listener: (lines: string) => void): () => void;
}
